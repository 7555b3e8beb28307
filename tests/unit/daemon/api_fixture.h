#pragma once
// The REST API as a pure handler, for the API's tests: requests are values, the response is
// captured, and the job manager behind it runs on fake agents and fake time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daemon/api/api.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {

constexpr const char* kAdmin = "admin-secret";
constexpr const char* kAlice = "alice-secret";
constexpr const char* kBob = "bob-secret";
constexpr const char* kJoin = "join-secret";
constexpr const char* kViewer = "viewer-secret";
constexpr const char* kOperator = "operator-secret";

// Most tests run without nodes, so the job waits for them rather than being refused as unable to fit.
const char* const kJobBody = R"({"name":"train","nodes":1,"wait_for_capacity":true,"command":{"argv":["/bin/true"]}})";

struct Reply {
  int status = 0;
  Json body;  // parsed when JSON
  std::string text;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;
  int answers = 0;

  std::string header(const std::string& name) const {
    for (const auto& [k, v] : headers) {
      if (k == name) return v;
    }
    return "";
  }
  std::string error_field() const { return body["error"].value("field", ""); }
  std::string error_code() const { return body["error"].value("code", ""); }
  std::string error_message() const { return body["error"].value("message", ""); }
};

// Users may give priorities up to kUserPriorityCeiling (--max-user-priority), so the owner's PATCH
// rules can be tested on jobs with a priority to lower.
constexpr int kUserPriorityCeiling = 10;
inline UserLimits test_limits() {
  UserLimits limits;
  limits.max_user_priority = kUserPriorityCeiling;
  return limits;
}

class ApiTest : public ::testing::Test {
 protected:
  ApiTest()
      : join_file(std::filesystem::path(::testing::TempDir()) / ("join-" + std::to_string(::getpid()) + ".token")),
        api(cluster.jobs, cluster.worker, cluster.files, tokens, cluster.clock, cluster.timers, "test-version", "", test_limits(), join_file) {
    tokens.add(new_token_record(kAdmin, "root", store::Role::admin, {}));
    tokens.add(new_token_record(kAlice, "alice", store::Role::user, {}));
    tokens.add(new_token_record(kBob, "bob", store::Role::user, {}));
    tokens.add(new_token_record(kJoin, "agent", store::Role::agent, {}));
    tokens.add(new_token_record(kViewer, "vic", store::Role::viewer, {}));
    tokens.add(new_token_record(kOperator, "olga", store::Role::operator_, {}));
  }
  ~ApiTest() override { std::filesystem::remove(join_file); }

  // Sends the request without waiting for anything the store worker still has to do.
  std::shared_ptr<Reply> send(const std::string& method, const std::string& target, const std::string& token,
                              std::string body = "") {
    net::HttpRequest req;
    req.method = method;
    req.target = target;
    EXPECT_TRUE(net::parse_target(req).ok()) << target;
    if (!token.empty()) req.headers["authorization"] = "Bearer " + token;
    req.body = std::move(body);
    req.remote = remote;
    auto reply = std::make_shared<Reply>();
    under_test->handle(req, [this, reply](net::HttpResponse resp) {
      if (on_answer) on_answer();
      ++reply->answers;
      reply->status = resp.status;
      reply->text = resp.body;
      reply->content_type = resp.content_type;
      if (resp.content_type == "application/json") reply->body = Json::parse(resp.body);
      reply->headers = resp.headers;
    });
    return reply;
  }

  Reply call(const std::string& method, const std::string& target, const std::string& token, std::string body = "") {
    auto reply = send(method, target, token, std::move(body));
    cluster.settle();
    EXPECT_EQ(reply->answers, 1) << method << " " << target << " must be answered exactly once";
    return *reply;
  }

  JobId submit_as(const std::string& token) {
    const Reply r = call("POST", "/v1/jobs", token, kJobBody);
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("id", JobId{0});
  }

  Cluster cluster;
  TokenRegistry tokens;
  std::filesystem::path join_file;
  Api api;
  Api* under_test = &api;  // a test of other limits points this at its own Api
  std::function<void()> on_answer;  // runs as the response is handed over
  std::string remote = "192.0.2.1";  // the address requests come from
};

}  // namespace trainyard::daemon::testing
