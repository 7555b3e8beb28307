// The CLI's client of several daemons against scripted fakes: which daemon each request goes to,
// what is repeated elsewhere and what is not, and what an error names.
#include "cli/failover_client.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>

namespace trainyard::cli {
namespace {

const std::string kA = "http://10.0.0.1:8080";
const std::string kB = "http://10.0.0.2:8080";

// Each daemon answers from its script, in order, then with its last answer.
struct Daemons {
  std::map<std::string, std::deque<HttpResult>> scripts;
  std::vector<std::string> asked;  // "URL METHOD TARGET", in order
};

class ScriptedClient final : public HttpClient {
 public:
  ScriptedClient(Daemons& daemons, std::string url) : daemons_(daemons), url_(std::move(url)) {}
  HttpResult send(const HttpRequest& request) override {
    daemons_.asked.push_back(url_ + " " + request.method + " " + request.target);
    auto& script = daemons_.scripts.at(url_);
    HttpResult next = script.front();
    if (script.size() > 1) script.pop_front();
    return next;
  }

 private:
  Daemons& daemons_;
  std::string url_;
};

HttpResponse ok(std::string body = "{}") { return {.status = 200, .body = std::move(body)}; }
HttpResponse standby() { return {.status = 503, .body = R"({"error":{"code":"unavailable","message":"standby"}})"}; }
HttpResponse moved(const std::string& location) { return {.status = 307, .headers = {{"location", location}}}; }
Error refused(const std::string& url) {
  return Error{ErrorCode::unavailable, "cannot reach daemon at " + url + ": Connection refused", std::string(kNotConnected)};
}
Error lost(const std::string& url) { return Error::unavailable("lost the connection to daemon at " + url); }
const HttpRequest kGet{.method = "GET", .target = "/v1/jobs"};
const HttpRequest kSubmit{.method = "POST", .target = "/v1/jobs"};

class FailoverClientTest : public ::testing::Test {
 protected:
  FailoverClient client_of(const std::vector<std::string>& urls) {
    std::vector<ServerUrl> servers;
    for (const auto& url : urls) servers.push_back(parse_server_url(url));
    return FailoverClient(servers, [this](const ServerUrl& url) { return std::make_unique<ScriptedClient>(daemons, url.text); });
  }
  Daemons daemons;
};

TEST_F(FailoverClientTest, MovesOnFromADeadDaemonAndStaysWithTheOneThatAnswered) {
  daemons.scripts[kA] = {refused(kA)};
  daemons.scripts[kB] = {ok()};
  FailoverClient client = client_of({kA, kB});
  ASSERT_TRUE(client.send(kGet));
  ASSERT_TRUE(client.send(kSubmit));
  EXPECT_EQ(daemons.asked, (std::vector<std::string>{kA + " GET /v1/jobs", kB + " GET /v1/jobs", kB + " POST /v1/jobs"}));
}

TEST_F(FailoverClientTest, PassesOverAStandbyAndFollowsItsRedirectWithinTheList) {
  daemons.scripts[kA] = {moved(kB + "/v1/jobs")};
  daemons.scripts[kB] = {standby(), standby(), ok()};
  FailoverClient client = client_of({kA, kB});
  // A redirects to B, which has not taken over yet; A still redirects there: a round of failures.
  const HttpResult result = client.send(kGet);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find(kB + " (a standby"), std::string::npos) << result.error().message;
  EXPECT_TRUE(client.send(kGet));  // B has taken over
  EXPECT_EQ(daemons.asked.back(), kB + " GET /v1/jobs");
}

TEST_F(FailoverClientTest, AnErrorNamesEveryDaemonTriedAndWhy) {
  daemons.scripts[kA] = {refused(kA)};
  daemons.scripts[kB] = {standby()};
  const HttpResult result = client_of({kA, kB}).send(kGet);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::unavailable);
  EXPECT_NE(result.error().message.find(kA + " (cannot reach daemon at " + kA + ": Connection refused)"), std::string::npos)
      << result.error().message;
  EXPECT_NE(result.error().message.find(kB + " (a standby"), std::string::npos) << result.error().message;
}

TEST_F(FailoverClientTest, NeverSendsTheTokenToADaemonOutsideTheList) {
  daemons.scripts[kA] = {moved("http://10.9.9.9:8080/v1/jobs")};
  daemons.scripts[kB] = {ok()};
  const HttpResult result = client_of({kA, kB}).send(kGet);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("the daemon at " + kA + " is a standby; the active one is http://10.9.9.9:8080"),
            std::string::npos)
      << result.error().message;
  EXPECT_EQ(daemons.asked, std::vector<std::string>{kA + " GET /v1/jobs"});
}

TEST_F(FailoverClientTest, DoesNotRepeatASubmitThatMayHaveReachedADaemon) {
  daemons.scripts[kA] = {lost(kA), ok()};
  daemons.scripts[kB] = {ok()};
  FailoverClient client = client_of({kA, kB});
  const HttpResult result = client.send(kSubmit);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "lost the connection to daemon at " + kA + "; not sent to another daemon, as this one may have acted on it");
  EXPECT_EQ(daemons.asked, std::vector<std::string>{kA + " POST /v1/jobs"});
  // A read is safe to repeat, and the next request starts at the next daemon.
  ASSERT_TRUE(client.send(kGet));
  EXPECT_EQ(daemons.asked.back(), kB + " GET /v1/jobs");
}

TEST_F(FailoverClientTest, ARequestNeverSentMovesOnEvenWhenNotSafeToRepeat) {
  daemons.scripts[kA] = {refused(kA)};
  daemons.scripts[kB] = {ok(R"({"id":7})")};
  const HttpResult result = client_of({kA, kB}).send(kSubmit);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->body, R"({"id":7})");
}

TEST_F(FailoverClientTest, OneDaemonAnswersInItsOwnWords) {
  daemons.scripts[kA] = {refused(kA)};
  const HttpResult unreachable = client_of({kA}).send(kGet);
  ASSERT_FALSE(unreachable);
  EXPECT_EQ(unreachable.error().message, "cannot reach daemon at " + kA + ": Connection refused");
  daemons.scripts[kA] = {standby()};
  const HttpResult busy = client_of({kA}).send(kGet);
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->status, 503);
}

}  // namespace
}  // namespace trainyard::cli
