// The REST calls each command makes: method, path, percent-encoded query and body.
#include <gtest/gtest.h>

#include "tests/unit/cli/command_line_helpers.h"

namespace trainyard::cli {
namespace {

using testing::get;
using testing::requests_of;

TEST(Target, KeepsUnreservedCharactersAndEscapesTheRestOfKeysAndValues) {
  EXPECT_EQ(Target("/x").param("aZ09-._~", "aZ09-._~").str(), "/x?aZ09-._~=aZ09-._~");
  EXPECT_EQ(Target("/x").param("a b&c", "d=e/é").param("empty", "").str(), "/x?a%20b%26c=d%3De%2F%C3%A9&empty=");
}

TEST(Target, AddsOnlyTheParametersThatAreSet) {
  EXPECT_EQ(Target("/v1/jobs").str(), "/v1/jobs");
  EXPECT_EQ(Target("/v1/jobs").param("a", std::nullopt).param("b", "x y").param("c", "1").str(), "/v1/jobs?b=x%20y&c=1");
}

TEST(Requests, Jobs) {
  EXPECT_EQ(requests_of({"jobs"}), std::vector{get("/v1/jobs?state=PENDING%2CSTARTING%2CRUNNING")});
  EXPECT_EQ(requests_of({"jobs", "--all"}), std::vector{get("/v1/jobs")});
  EXPECT_EQ(requests_of({"jobs", "--state", "failed,cancelled"}), std::vector{get("/v1/jobs?state=FAILED%2CCANCELLED")});
  EXPECT_EQ(requests_of({"jobs", "--state", "pending", "--share", "a&b", "--user", "bob", "--limit", "10", "--before", "99"}),
            std::vector{get("/v1/jobs?state=PENDING&share=a%26b&user=bob&limit=10&before=99")});
  EXPECT_EQ(requests_of({"jobs", "--all", "--limit", "10", "--cursor", "c1.3433.0123456789abcdef"}),
            std::vector{get("/v1/jobs?limit=10&cursor=c1.3433.0123456789abcdef")});
}

TEST(Requests, NodesFilterOnTheDaemon) {
  EXPECT_EQ(requests_of({"nodes"}), std::vector{get("/v1/nodes")});
  EXPECT_EQ(requests_of({"nodes", "--state", "down,unhealthy"}), std::vector{get("/v1/nodes?state=DOWN%2CUNHEALTHY")});
}

TEST(Requests, Events) {
  EXPECT_EQ(requests_of({"events"}), std::vector{get("/v1/events?order=newest")});
  EXPECT_EQ(requests_of({"events", "--type", "job.*", "--job", "7", "--node", "trn-1", "--after", "40", "--limit", "5"}),
            std::vector{get("/v1/events?type=job.%2A&job=7&node=trn-1&after=40&limit=5")});
  EXPECT_EQ(requests_of({"events", "--since", "10m"}), std::vector{get("/v1/events?order=newest&since=10m")});
  EXPECT_EQ(requests_of({"events", "--last", "20"}), std::vector{get("/v1/events?order=newest&limit=20")});
  EXPECT_THROW(requests_of({"events", "--since", "yesterday"}), UsageError);
  EXPECT_THROW(requests_of({"events", "--last", "5", "--limit", "5"}), UsageError);
  EXPECT_THROW(requests_of({"events", "--last", "5", "--after", "3"}), UsageError);
  EXPECT_THROW(requests_of({"events", "--follow", "--since", "10m"}), UsageError);
  EXPECT_THROW(requests_of({"events", "--follow", "--last", "3"}), UsageError);
  EXPECT_THROW(requests_of({"events", "--job", "x"}), UsageError);
  EXPECT_THROW(requests_of({"events", "--limit", "0"}), UsageError);
  EXPECT_EQ(requests_of({"events", "--cursor", "c1.3433.0123456789abcdef"}),
            std::vector{get("/v1/events?order=newest&cursor=c1.3433.0123456789abcdef")});
  EXPECT_THROW(requests_of({"events", "--follow", "--cursor", "c1.31.0123456789abcdef"}), UsageError);
}

TEST(Requests, JobFetchesTheJobThenItsAttempts) {
  EXPECT_EQ(requests_of({"job", "42"}), (std::vector{get("/v1/jobs/42"), get("/v1/jobs/42/attempts")}));
}

TEST(Requests, Logs) {
  EXPECT_EQ(requests_of({"logs", "5"}), std::vector{get("/v1/jobs/5/logs")});
  EXPECT_EQ(requests_of({"logs", "5", "--rank", "0", "--tail", "100", "--attempt", "2"}),
            std::vector{get("/v1/jobs/5/logs?rank=0&tail=100&attempt=2")});
}

TEST(Requests, HoldReleaseRequeueAndUpdate) {
  EXPECT_EQ(requests_of({"hold", "9"}), (std::vector<ApiRequest>{{"POST", "/v1/jobs/9/hold", std::nullopt}}));
  EXPECT_EQ(requests_of({"release", "9"}), (std::vector<ApiRequest>{{"POST", "/v1/jobs/9/release", std::nullopt}}));
  EXPECT_EQ(requests_of({"requeue", "9"}), (std::vector<ApiRequest>{{"POST", "/v1/jobs/9/requeue", std::nullopt}}));
  EXPECT_EQ(requests_of({"update", "9", "--priority", "3", "--nodes", "2"}),
            (std::vector<ApiRequest>{{"PATCH", "/v1/jobs/9", Json{{"priority", 3}, {"nodes", 2}}}}));
  EXPECT_EQ(requests_of({"submit", "--hold", "--", "/bin/true"}).at(0).body->value("hold", false), true);
}

TEST(Requests, CancelNodesAndToken) {
  EXPECT_EQ(requests_of({"cancel", "9"}), (std::vector<ApiRequest>{{"POST", "/v1/jobs/9/cancel", std::nullopt}}));
  EXPECT_EQ(requests_of({"nodes"}), std::vector{get("/v1/nodes")});
  EXPECT_EQ(requests_of({"token", "create", "bob", "--role", "admin"}),
            (std::vector<ApiRequest>{{"POST", "/v1/tokens", Json{{"user", "bob"}, {"role", "admin"}}}}));
  EXPECT_EQ(requests_of({"token", "create", "bob", "--ttl", "1h"}),
            (std::vector<ApiRequest>{{"POST", "/v1/tokens", Json{{"user", "bob"}, {"role", "user"}, {"ttl_s", 3600}}}}));
  EXPECT_EQ(requests_of({"token", "list"}), std::vector{get("/v1/tokens")});
  EXPECT_EQ(requests_of({"token", "revoke", "tok_a/b"}),
            (std::vector<ApiRequest>{{"DELETE", "/v1/tokens/tok_a%2Fb", std::nullopt}}));
  EXPECT_EQ(requests_of({"token", "rotate-join"}),
            (std::vector<ApiRequest>{{"POST", "/v1/tokens/join/rotate", std::nullopt}}));
}

TEST(Requests, MetricsAndFaults) {
  EXPECT_EQ(requests_of({"metrics", "5"}), std::vector{get("/v1/jobs/5/metrics?max_points=50")});
  EXPECT_EQ(requests_of({"metrics", "5", "--max-points", "1000"}), std::vector{get("/v1/jobs/5/metrics?max_points=1000")});
  EXPECT_EQ(requests_of({"fault", "n1", "core:3=corrupt", "link=drop"}),
            (std::vector<ApiRequest>{{"PUT", "/v1/nodes/n1/faults", Json{{"faults", {"core:3=corrupt", "link=drop"}}}}}));
  EXPECT_EQ(requests_of({"fault", "n1", "--clear"}),
            (std::vector<ApiRequest>{{"DELETE", "/v1/nodes/n1/faults", std::nullopt}}));
}

TEST(Requests, HealthDrainUndrain) {
  EXPECT_EQ(requests_of({"health", "run", "a", "b", "--suite", "collective"}),
            (std::vector<ApiRequest>{{"POST", "/v1/healthchecks", Json{{"nodes", {"a", "b"}}, {"suites", {"collective"}}}}}));
  EXPECT_EQ(requests_of({"health", "run", "a"}),
            (std::vector<ApiRequest>{{"POST", "/v1/healthchecks", Json{{"nodes", {"a"}}}}}));
  EXPECT_EQ(requests_of({"health", "show", "7"}), std::vector{get("/v1/healthchecks/7")});
  EXPECT_EQ(requests_of({"drain", "a", "--reason", "bad fan", "--now"}),
            (std::vector<ApiRequest>{{"POST", "/v1/nodes/a/drain", Json{{"stop_attempts", true}, {"reason", "bad fan"}}}}));
  EXPECT_EQ(requests_of({"undrain", "a"}), (std::vector<ApiRequest>{{"POST", "/v1/nodes/a/undrain", std::nullopt}}));
  EXPECT_EQ(requests_of({"share", "delete", "team/x"}),
            (std::vector<ApiRequest>{{"DELETE", "/v1/shares/team%2Fx", std::nullopt}}));
  EXPECT_THROW(requests_of({"share", "delete"}), UsageError);
  EXPECT_EQ(requests_of({"canaries", "--limit", "5"}), std::vector{get("/v1/canaries?limit=5")});
  EXPECT_EQ(requests_of({"health", "list"}), std::vector{get("/v1/healthchecks")});
  EXPECT_EQ(requests_of({"health", "list", "--limit", "20"}), std::vector{get("/v1/healthchecks?limit=20")});
  EXPECT_EQ(requests_of({"goodput"}), std::vector{get("/v1/goodput")});
}

TEST(Requests, SubmitPostsTheFileAsItIs) {
  const Json spec = {{"name", "x"}, {"kind", "simulated"}, {"nodes", 2}, {"future_field", true}};
  std::string asked;
  const auto read = [&](const std::string& path) {
    asked = path;
    return spec.dump();
  };
  EXPECT_EQ(requests_of({"submit", "spec.json"}, read), (std::vector<ApiRequest>{{"POST", "/v1/jobs", spec}}));
  EXPECT_EQ(asked, "spec.json");
}

TEST(Requests, SubmitQuickFormPostsTheBuiltSpec) {
  const auto requests = requests_of({"submit", "--name", "n", "--", "/bin/true"});
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/v1/jobs");
  EXPECT_EQ(requests[0].body->at("command").at("argv"), Json::array({"/bin/true"}));
}

TEST(Requests, SubmitRejectsAFileThatIsNotAJsonObject) {
  const auto rejected_field = [](const std::string& text) {
    try {
      requests_of({"submit", "spec.json"}, [&](const std::string&) { return text; });
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return std::string("<accepted>");
  };
  EXPECT_EQ(rejected_field("{\"name\": "), "spec.json");
  EXPECT_EQ(rejected_field("[1, 2]"), "spec.json");
  EXPECT_EQ(rejected_field("{}"), "<accepted>");  // the server judges the spec itself
}

}  // namespace
}  // namespace trainyard::cli
