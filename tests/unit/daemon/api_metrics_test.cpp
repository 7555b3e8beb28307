// GET /metrics through the API: who may scrape it, what it answers, and the request observer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/api.h"
#include "daemon/daemon_metrics.h"
#include "daemon/prometheus.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Observed {
  std::string method, route;
  int status = 0;
  double seconds = -1;
};

class ApiMetricsTest : public ::testing::Test {
 protected:
  ApiMetricsTest() {
    tokens.add(new_token_record("admin-secret", "root", Role::admin, {}));
    tokens.add(new_token_record("operator-secret", "olga", Role::operator_, {}));
    tokens.add(new_token_record("viewer-secret", "vic", Role::viewer, {}));
    tokens.add(new_token_record("alice-secret", "alice", Role::user, {}));
    tokens.add(new_token_record("join-secret", "agent", Role::agent, {}));
    cluster.jobs.set_metrics(&metrics);
    metrics.watch(cluster.jobs, cluster.clock);
    api.set_metrics_exposition([this] { return metrics.render(); }, false);
    api.set_request_observer([this](const std::string& method, const std::string& route, int status, double seconds) {
      observed.push_back({method, route, status, seconds});
    });
  }

  net::HttpResponse call(const std::string& method, const std::string& target, const std::string& token) {
    net::HttpRequest req;
    req.method = method;
    req.target = target;
    EXPECT_EQ(net::parse_target(req), "") << target;
    if (!token.empty()) req.headers["authorization"] = "Bearer " + token;
    std::optional<net::HttpResponse> answer;
    api.handle(req, [&answer](net::HttpResponse resp) { answer = std::move(resp); });
    cluster.settle();
    EXPECT_TRUE(answer) << method << " " << target << " was not answered";
    return answer.value_or(net::HttpResponse{});
  }

  DaemonMetrics metrics;
  Cluster cluster;
  TokenRegistry tokens;
  Api api{cluster.jobs, cluster.worker, cluster.files, tokens, cluster.clock, "test-version", ""};
  std::vector<Observed> observed;
};

TEST_F(ApiMetricsTest, AdminsOperatorsAndViewersScrapeAndUsersAreForbidden) {
  for (const char* token : {"admin-secret", "operator-secret", "viewer-secret"}) {
    const auto r = call("GET", "/metrics", token);
    EXPECT_EQ(r.status, 200) << token;
    EXPECT_EQ(r.content_type, prom::kContentType);
    EXPECT_THAT(r.body, HasSubstr("# TYPE trainyard_jobs gauge\n"));
  }
  auto r = call("GET", "/metrics", "alice-secret");
  EXPECT_EQ(r.status, 403);
  EXPECT_THAT(r.body, HasSubstr("role user may not read metrics"));
  EXPECT_EQ(call("GET", "/metrics", "join-secret").status, 403) << "an agent token";
  r = call("GET", "/metrics", "");
  EXPECT_EQ(r.status, 401);
  EXPECT_THAT(r.body, HasSubstr("--metrics-public"));
  EXPECT_EQ(call("GET", "/metrics", "not-a-token").status, 401);
  r = call("POST", "/metrics", "admin-secret");
  EXPECT_EQ(r.status, 405);
}

TEST_F(ApiMetricsTest, PublicMetricsNeedNoToken) {
  api.set_metrics_exposition([this] { return metrics.render(); }, true);
  const auto r = call("GET", "/metrics", "");
  EXPECT_EQ(r.status, 200);
  EXPECT_THAT(r.body, StartsWith("# HELP "));
  EXPECT_EQ(call("GET", "/v1/jobs", "").status, 401) << "only /metrics is public";
}

TEST_F(ApiMetricsTest, WithoutAnExpositionThereIsNoMetricsRoute) {
  Api plain(cluster.jobs, cluster.worker, cluster.files, tokens, cluster.clock, "test-version", "");
  std::optional<net::HttpResponse> answer;
  net::HttpRequest req;
  req.method = "GET";
  req.target = "/metrics";
  ASSERT_EQ(net::parse_target(req), "");
  plain.handle(req, [&answer](net::HttpResponse resp) { answer = std::move(resp); });
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 404);
}

TEST_F(ApiMetricsTest, TheObserverHearsEveryAnswerWithItsRoutePatternNotItsIds) {
  call("GET", "/v1/jobs/12345", "admin-secret");
  call("GET", "/v1/nodes/n%22x/health", "admin-secret");
  call("GET", "/v1/made-up/path", "admin-secret");
  call("BREW", "/metrics", "admin-secret");
  call("GET", "/metrics", "alice-secret");
  ASSERT_EQ(observed.size(), 5u);
  EXPECT_EQ(observed[0].route, "/v1/jobs/{id}");
  EXPECT_EQ(observed[0].status, 404);
  EXPECT_GE(observed[0].seconds, 0);
  EXPECT_EQ(observed[1].route, "/v1/nodes/{name}/health");
  EXPECT_EQ(observed[2].route, "other");
  EXPECT_EQ(observed[3].method, "other");
  EXPECT_EQ(observed[3].status, 405);
  EXPECT_EQ(observed[4].route, "/metrics");
  EXPECT_EQ(observed[4].status, 403);
}

}  // namespace
}  // namespace trainyard::testing
