// What the API offers the metrics code: GET /metrics answers what the exposition renders, to the
// roles that read every job (or anyone when public), and every answered request is observed once
// with its route's pattern.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

TEST_F(ApiTest, MetricsAreNotARouteUntilAnExpositionIsSet) {
  EXPECT_EQ(call("GET", "/metrics", kAdmin).status, 404);
  EXPECT_EQ(call("GET", "/metrics", "").status, 404);
}

TEST_F(ApiTest, MetricsAnswerTheExpositionToRolesThatReadEveryJob) {
  int renders = 0;
  api.set_metrics_exposition([&renders] { return "trainyard_up " + std::to_string(++renders) + "\n"; }, false);
  EXPECT_EQ(call("GET", "/metrics", "").status, 401);
  EXPECT_EQ(call("GET", "/metrics", kAlice).status, 403);
  EXPECT_EQ(call("GET", "/metrics", kJoin).status, 401) << "an agent token is no API token";
  for (const char* secret : {kViewer, kOperator, kAdmin}) {
    const Reply r = call("GET", "/metrics", secret);
    EXPECT_EQ(r.status, 200) << secret;
    EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
    EXPECT_THAT(r.text, ::testing::StartsWith("trainyard_up "));
  }
  EXPECT_EQ(renders, 3) << "rendered for each answered scrape only";
  EXPECT_EQ(call("POST", "/metrics", kAdmin).header("Allow"), "GET");
}

TEST_F(ApiTest, PublicMetricsNeedNoToken) {
  api.set_metrics_exposition([] { return std::string("trainyard_up 1\n"); }, true);
  const Reply r = call("GET", "/metrics", "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.text, "trainyard_up 1\n");
  EXPECT_EQ(call("GET", "/metrics", kAlice).status, 200) << "public means everyone";
}

TEST_F(ApiTest, EveryAnsweredRequestIsObservedOnceWithItsRoutePattern) {
  struct Seen {
    std::string method, pattern;
    int status;
    bool operator==(const Seen&) const = default;
  };
  std::vector<Seen> seen;
  api.set_request_observer([&seen](const std::string& method, const std::string& pattern, int status, double seconds) {
    EXPECT_GE(seconds, 0.0);
    seen.push_back({method, pattern, status});
  });
  const JobId id = submit_as(kAlice);
  call("GET", "/v1/jobs/" + std::to_string(id), kAlice);
  call("GET", "/v1/jobs/" + std::to_string(id), kBob);
  call("GET", "/v1/jobs/abc/logs", kAlice);
  call("GET", "/v1/nope", kAlice);
  call("GET", "/v1/nope", "");
  call("BREW", "/v1/jobs", kAlice);
  call("DELETE", "/v1/jobs", kAlice);
  call("GET", "/healthz", "");
  const std::vector<Seen> expected = {
      {"POST", "/v1/jobs", 201},          {"GET", "/v1/jobs/{id}", 200},     {"GET", "/v1/jobs/{id}", 404},
      {"GET", "/v1/jobs/{id}/logs", 400}, {"GET", "unmatched", 404},         {"GET", "unmatched", 401},
      {"other", "/v1/jobs", 405},         {"DELETE", "/v1/jobs", 405},       {"GET", "/healthz", 200},
  };
  EXPECT_EQ(seen, expected);
}

}  // namespace
}  // namespace trainyard::daemon::testing
