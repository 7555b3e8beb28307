// The REST API as a pure handler: requests are values, the response is captured, and the job
// manager behind it runs on fake agents and fake time. Here: what every route shares (tokens,
// limits, unknown paths and methods, the request target); each resource has its own file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

TEST_F(ApiTest, AUserOverTheRateLimitGets429WithRetryAfterAndAnAdminDoesNot) {
  UserLimits limits;
  limits.rate = {1, 2, false};
  Api limited(cluster.jobs, cluster.worker, cluster.files, tokens, cluster.clock, cluster.timers, "test-version", "", limits);
  under_test = &limited;
  EXPECT_EQ(call("GET", "/v1/jobs", kAlice).status, 200);
  EXPECT_EQ(call("GET", "/v1/jobs", kAlice).status, 200);
  Reply r = call("GET", "/v1/jobs", kAlice);
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.error_code(), "rate_limited");
  EXPECT_THAT(r.error_message(), HasSubstr("1 requests/s per user with bursts of 2 (--rate-limit-rps"));
  EXPECT_EQ(r.header("Retry-After"), "1");
  EXPECT_EQ(call("POST", "/v1/jobs", kAlice, kJobBody).status, 429) << "a refused request does nothing";
  EXPECT_FALSE(cluster.stored_job(1));
  EXPECT_EQ(call("GET", "/v1/jobs", kBob).status, 200) << "alice's bucket is hers alone";
  for (int i = 0; i < 10; ++i) EXPECT_EQ(call("GET", "/v1/jobs", kAdmin).status, 200) << "admins are exempt";
  cluster.advance(Millis(1000));
  EXPECT_EQ(call("GET", "/v1/jobs", kAlice).status, 200) << "a token came back after Retry-After";
}

TEST_F(ApiTest, AUserOverThePendingCapGets429NamingItAndAnAdminDoesNot) {
  UserLimits limits;
  limits.max_pending_per_user = 2;
  Api limited(cluster.jobs, cluster.worker, cluster.files, tokens, cluster.clock, cluster.timers, "test-version", "", limits);
  under_test = &limited;
  const JobId first = submit_as(kAlice);
  submit_as(kAlice);
  Reply r = call("POST", "/v1/jobs", kAlice, kJobBody);
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.error_code(), "too_many_pending");
  EXPECT_THAT(r.error_message(), HasSubstr("--max-pending-per-user 2"));
  EXPECT_FALSE(cluster.stored_job(3)) << "the refused job was kept";
  submit_as(kBob);
  for (int i = 0; i < 3; ++i) submit_as(kAdmin);
  EXPECT_EQ(call("POST", "/v1/jobs/" + std::to_string(first) + "/cancel", kAlice).status, 200);
  submit_as(kAlice);
}

TEST_F(ApiTest, HealthzNeedsNoToken) {
  const Reply r = call("GET", "/healthz", "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body["version"], "test-version");
}

TEST_F(ApiTest, MissingOrWrongTokenIs401) {
  Reply r = call("GET", "/v1/jobs", "");
  EXPECT_EQ(r.status, 401);
  EXPECT_THAT(r.error_message(), HasSubstr("missing bearer token"));
  r = call("GET", "/v1/jobs", "not-a-token");
  EXPECT_EQ(r.status, 401);
  EXPECT_THAT(r.error_message(), HasSubstr("not valid"));
  EXPECT_EQ(call("GET", "/v1/jobs", kJoin).status, 401) << "the agents' join token is not an API token";
  EXPECT_EQ(call("POST", "/v1/jobs", "", kJobBody).status, 401);
  EXPECT_FALSE(cluster.stored_job(1)) << "an unauthenticated submission was stored";
}

TEST_F(ApiTest, UnknownPathIs404) {
  for (const std::string target : {"/", "/v2/jobs", "/v1", "/v1/nope", "/v1/jobs/1/nope", "/v1/jobs/1/cancel/now"}) {
    const Reply r = call("GET", target, kAdmin);
    EXPECT_EQ(r.status, 404) << target;
    EXPECT_EQ(r.error_code(), "not_found") << target;
  }
  EXPECT_EQ(call("GET", "/v1/jobs/12345", kAdmin).status, 404) << "a job that does not exist";
  EXPECT_EQ(call("GET", "/v1/nodes/ghost", kAdmin).status, 404);
}

TEST_F(ApiTest, WrongMethodIs405WithAllow) {
  struct Case {
    std::string method;
    std::string target;
    std::string allow;
  };
  const std::vector<Case> cases = {
      {"DELETE", "/v1/jobs", "GET, POST"},
      {"PUT", "/v1/jobs/1", "GET, PATCH"},
      {"GET", "/v1/jobs/1/cancel", "POST"},
      {"POST", "/v1/jobs/1/attempts", "GET"},
      {"POST", "/v1/nodes", "GET"},
      {"PUT", "/v1/tokens", "GET, POST"},
      {"GET", "/v1/tokens/join/rotate", "POST"},
      {"GET", "/v1/tokens/tok_1", "DELETE"},
      {"POST", "/healthz", "GET"},
      {"GET", "/v1/shares/default", "DELETE, PUT"},
  };
  for (const auto& c : cases) {
    const Reply r = call(c.method, c.target, kAdmin);
    EXPECT_EQ(r.status, 405) << c.method << " " << c.target;
    EXPECT_EQ(r.header("Allow"), c.allow) << c.method << " " << c.target;
  }
}

TEST(RequestTarget, IsSplitBeforeItIsDecoded) {
  auto parsed = [](const std::string& target) {
    net::HttpRequest req;
    req.target = target;
    EXPECT_TRUE(net::parse_target(req).ok()) << target;
    return req;
  };
  EXPECT_EQ(parsed("/v1/nodes/a%20b").segments, (std::vector<std::string>{"v1", "nodes", "a b"}));
  EXPECT_EQ(parsed("/").segments, std::vector<std::string>{});
  const net::HttpRequest q = parsed("/v1/jobs?state=RUNNING&user=a%2Fb+c");
  EXPECT_EQ(q.path, "/v1/jobs");
  EXPECT_EQ(q.query.at("user"), "a/b c");

  auto problem = [](const std::string& target) {
    net::HttpRequest req;
    req.target = target;
    const Result<void> parsed = net::parse_target(req);
    EXPECT_FALSE(parsed.ok()) << target;
    EXPECT_EQ(parsed ? "" : parsed.error().field, "path") << target;
    return parsed ? "" : parsed.error().message;
  };
  EXPECT_THAT(problem("/v1%2Fnodes"), HasSubstr("encoded \"/\""));
  EXPECT_THAT(problem("/v1%2fnodes"), HasSubstr("encoded \"/\""));
  EXPECT_THAT(problem("/v1/nodes/a%2Fb"), HasSubstr("encoded \"/\""));
  EXPECT_THAT(problem("/v1//nodes"), HasSubstr("empty segment"));
  EXPECT_THAT(problem("//v1/nodes"), HasSubstr("empty segment"));
  EXPECT_THAT(problem("/v1/nodes/"), HasSubstr("empty segment"));
  EXPECT_THAT(problem("/v1/%zz"), HasSubstr("%-escape"));
  EXPECT_THAT(problem("/v1/jobs?x=%z"), HasSubstr("%-escape"));
  EXPECT_THAT(problem("v1/jobs"), HasSubstr("start with"));
}

}  // namespace
}  // namespace trainyard::daemon::testing
