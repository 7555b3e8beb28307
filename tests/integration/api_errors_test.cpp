// Bad requests get the right 4xx and a message that names the problem, and the daemon keeps serving.
#include <gtest/gtest.h>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

struct BadRequest {
  std::string what;
  std::string method;
  std::string target;
  std::string body;
  int status;
  std::string field;    // expected error.field ("" when none)
  std::string mention;  // a piece of the message
  std::string token = "admin";  // "admin", "none", "wrong", "alice"
};

TEST(ApiErrors, EachBadRequestIsAnsweredClearlyAndTheDaemonKeepsServing) {
  Cluster cluster;
  cluster.start_daemon({"--body-limit-bytes", "65536"});
  const auto alice_token = cluster.api("POST", "/v1/tokens", R"({"user":"alice"})").body["token"].get<std::string>();
  // No agent: jobs are kept only when they wait for capacity.
  const auto admin_job =
      cluster.submit({{"name", "x"}, {"nodes", 9}, {"wait_for_capacity", true}, {"command", {{"argv", {"true"}}}}});
  const std::string job_path = "/v1/jobs/" + std::to_string(admin_job);
  const std::string valid = R"({"name":"ok","wait_for_capacity":true,"command":{"argv":["true"]}})";

  const std::vector<BadRequest> cases = {
      {"malformed JSON", "POST", "/v1/jobs", R"({"name": )", 400, "", "malformed JSON"},
      {"body not an object", "POST", "/v1/jobs", "[1,2]", 400, "", "must be a JSON object"},
      {"wrong type", "POST", "/v1/jobs", R"({"name":"a","nodes":"two","command":{"argv":["true"]}})", 400, "nodes", "integer"},
      {"unknown field", "POST", "/v1/jobs", R"({"name":"a","gpus":8,"command":{"argv":["true"]}})", 400, "gpus", "unknown field"},
      {"nodes zero", "POST", "/v1/jobs", R"({"name":"a","nodes":0,"command":{"argv":["true"]}})", 400, "nodes", "1 to 1024"},
      {"nodes too many", "POST", "/v1/jobs", R"({"name":"a","nodes":5000,"command":{"argv":["true"]}})", 400, "nodes", "got 5000"},
      {"no node to run on", "POST", "/v1/jobs", R"({"name":"a","command":{"argv":["true"]}})", 400, "nodes",
       "no node is registered yet"},
      {"negative priority", "POST", "/v1/jobs", R"({"name":"a","priority":-1,"command":{"argv":["true"]}})", 400, "priority", "0 to 9999"},
      {"missing name", "POST", "/v1/jobs", R"({"command":{"argv":["true"]}})", 400, "name", "required"},
      {"missing command", "POST", "/v1/jobs", R"({"name":"a"})", 400, "command", "required"},
      {"retry attempts out of range", "POST", "/v1/jobs", R"({"name":"a","retry":{"attempts":11},"command":{"argv":["true"]}})",
       400, "retry.attempts", "1 to 10"},
      {"bad kind", "POST", "/v1/jobs", R"({"name":"a","kind":"docker","command":{"argv":["true"]}})", 400, "kind", "command"},
      {"bad workload field", "POST", "/v1/jobs", R"({"name":"a","kind":"simulated","workload":{"precision":"fp8"}})", 400,
       "workload.precision", "fp32"},
      {"huge body", "POST", "/v1/jobs", std::string(200 * 1024, ' ') + valid, 413, "", "exceeds the limit"},
      {"bad id", "GET", "/v1/jobs/abc", "", 400, "id", "job id"},
      {"zero id", "GET", "/v1/jobs/0", "", 400, "id", "job id"},
      {"no such job", "GET", "/v1/jobs/987654", "", 404, "", "does not exist"},
      {"wrong method on jobs", "DELETE", "/v1/jobs", "", 405, "", "not allowed"},
      {"wrong method on cancel", "GET", job_path + "/cancel", "", 405, "", "use POST"},
      {"missing token", "GET", "/v1/jobs", "", 401, "", "missing bearer token", "none"},
      {"wrong token", "GET", "/v1/jobs", "", 401, "", "not valid", "wrong"},
      {"another user's job", "GET", job_path, "", 404, "", "does not exist", "alice"},
      {"another user's cancel", "POST", job_path + "/cancel", "", 404, "", "does not exist", "alice"},
      {"encoded slash", "GET", "/v1%2Fnodes", "", 400, "path", "encoded \"/\""},
      {"empty segment", "GET", "/v1//nodes", "", 400, "path", "empty segment"},
      {"trailing slash", "GET", "/v1/nodes/", "", 400, "path", "empty segment"},
      {"system share", "POST", "/v1/jobs", R"({"name":"a","share":"system","command":{"argv":["true"]}})", 403, "share",
       "daemon's own"},
      {"invented share", "POST", "/v1/jobs", R"({"name":"a","share":"mine","command":{"argv":["true"]}})", 400, "share",
       "PUT /v1/shares/mine", "alice"},
      {"share system", "PUT", "/v1/shares/system", R"({"weight":9})", 403, "name", "daemon's own"},
      {"unknown query parameter", "GET", "/v1/jobs?colour=red", "", 400, "colour", "unknown query parameter"},
      {"bad state filter", "GET", "/v1/jobs?state=SLEEPING", "", 400, "state", "PENDING"},
      {"limit zero", "GET", "/v1/jobs?limit=0", "", 400, "limit", "1 to 1000"},
      {"token by non-admin", "POST", "/v1/tokens", R"({"user":"bob"})", 403, "", "role user may not create tokens", "alice"},
      {"token with bad role", "POST", "/v1/tokens", R"({"user":"bob","role":"root"})", 400, "role", "user"},
      {"unknown path", "GET", "/v1/nope", "", 404, "", "no such endpoint"},
      {"unknown node", "GET", "/v1/nodes/ghost", "", 404, "", "ghost"},
      {"bad log rank", "GET", job_path + "/logs?rank=abc", "", 400, "rank", "integer"},
      {"share by non-admin", "PUT", "/v1/shares/team", R"({"weight":2})", 403, "", "role user may not change shares", "alice"},
      {"share weight zero", "PUT", "/v1/shares/team", R"({"weight":0})", 400, "weight", "number"},
  };
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    std::string token = cluster.admin_token();
    if (c.token == "wrong") token = "ty_wrong";
    if (c.token == "alice") token = alice_token;
    if (c.token == "none") token = kNoToken;
    const ApiResult r = cluster.api(c.method, c.target, c.body, token);
    EXPECT_EQ(r.status, c.status) << r.body.dump();
    ASSERT_TRUE(r.body.contains("error")) << r.body.dump();
    const std::string message = r.body["error"]["message"];
    EXPECT_NE(message.find(c.mention), std::string::npos) << message;
    if (!c.field.empty()) {
      EXPECT_EQ(r.body["error"].value("field", ""), c.field) << r.body.dump();
    }
    // Still serving after every bad request.
    EXPECT_EQ(cluster.api("GET", "/healthz").status, 200);
  }
  EXPECT_EQ(cluster.api("POST", "/v1/jobs", valid).status, 201);
}

}  // namespace
}  // namespace trainyard::testing
