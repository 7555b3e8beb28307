// Health checks end to end: real agents with injected faults, verdicts through the API.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <limits>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

Json node_named(Cluster& cluster, const std::string& name) { return cluster.api("GET", "/v1/nodes/" + name).body; }

// Every listed node has finished at least one health check.
void wait_until_checked(Cluster& cluster, int count) {
  ASSERT_TRUE(eventually(
      [&] {
        int checked = 0;
        const Json nodes = cluster.api("GET", "/v1/nodes").body["nodes"];
        for (const auto& n : nodes) checked += n.contains("last_check");
        return checked >= count;
      },
      30s))
      << cluster.api("GET", "/v1/nodes").body.dump(2);
}

Json wait_check_done(Cluster& cluster, std::int64_t id) {
  Json check;
  const bool done = eventually(
      [&] {
        check = cluster.api("GET", "/v1/healthchecks/" + std::to_string(id)).body;
        return check.value("state", "") != "RUNNING";
      },
      60s);
  EXPECT_TRUE(done) << check.dump(2);
  return check;
}

TEST(Health, ACorruptCoreMakesItsNodeUnhealthyAtRegistrationNamingTheCore) {
  Cluster cluster;
  cluster.start_daemon();
  for (int i = 0; i < 4; ++i) {
    AgentSpec spec;
    if (i == 2) spec.extra_flags = {"--fault", "core:3=corrupt"};
    cluster.start_agent("trn-" + std::to_string(i), spec);
  }
  wait_until_checked(cluster, 4);
  for (int i = 0; i < 4; ++i) {
    const Json node = node_named(cluster, "trn-" + std::to_string(i));
    if (i == 2) {
      EXPECT_EQ(node["state"], "UNHEALTHY") << node.dump(2);
      EXPECT_NE(node["state_reason"].get<std::string>().find("core 3"), std::string::npos) << node.dump(2);
    } else {
      EXPECT_EQ(node["state"], "HEALTHY") << node.dump(2);
    }
  }
  // The history keeps the measured values of every core.
  const Json history = cluster.api("GET", "/v1/nodes/trn-2/health").body;
  ASSERT_GE(history["checks"].size(), 1u) << history.dump();
  const Json& latest = history["checks"][0];
  EXPECT_EQ(latest["kind"], "registration");
  EXPECT_EQ(latest["verdict"], "UNHEALTHY");
  EXPECT_EQ(latest["accelerator"]["cores"].size(), 4u);
  EXPECT_EQ(latest["accelerator"]["cores"][3]["checks"][0]["status"], "failed") << latest.dump(2);
  EXPECT_GT(latest["accelerator"]["cores"][3]["checks"][0]["measured"].get<double>(),
            latest["accelerator"]["cores"][3]["checks"][0]["limit"].get<double>());
}

// Loopback busbw between agent processes on a shared 2-core machine varies from one test to the
// next: a healthy pair measured 15x below the median under a loaded CI run. The throttled link is
// ~300x below it. The tests therefore judge at 3% of the median (about the geometric middle)
// rather than the production default of 50%, so they fail only on a wrong verdict, not on noise.
const std::vector<std::string> kNoisyHostFlags = {"--suspect-pct", "3"};

TEST(Health, AThrottledLinkMakesOnlyItsNodeSuspect) {
  Cluster cluster;
  std::vector<std::string> flags = kNoisyHostFlags;
  flags.insert(flags.end(), {"--health-collective-kib", "256"});
  cluster.start_daemon(flags);
  for (int i = 0; i < 4; ++i) {
    AgentSpec spec;
    if (i == 1) spec.extra_flags = {"--fault", "link=throttle:2MB"};
    cluster.start_agent("trn-" + std::to_string(i), spec);
  }
  cluster.wait_for_nodes(4);
  const auto started = cluster.api("POST", "/v1/healthchecks",
                                   R"({"nodes":["trn-0","trn-1","trn-2","trn-3"],"suites":["collective"]})");
  ASSERT_EQ(started.status, 202) << started.body.dump();
  const Json check = wait_check_done(cluster, started.body["id"].get<std::int64_t>());
  EXPECT_EQ(check["state"], "FAILED") << check.dump(2);
  EXPECT_GT(check["collective_runs"].size(), 1u) << "the slow run was not localised:\n" << check.dump(2);
  for (int i = 0; i < 4; ++i) {
    const Json node = node_named(cluster, "trn-" + std::to_string(i));
    EXPECT_EQ(node["state"], i == 1 ? "SUSPECT" : "HEALTHY") << node.dump(2) << "\n" << check.dump(2);
  }
  // The verdict names the node and says what was measured.
  EXPECT_NE(node_named(cluster, "trn-1")["state_reason"].get<std::string>().find("busbw"), std::string::npos);
  bool named = false;
  for (const auto& v : check["verdicts"]) named |= v["node"] == "trn-1" && v["state"] == "SUSPECT";
  EXPECT_TRUE(named) << check["verdicts"].dump(2);
  // The pair tests as the dashboard's matrix shows them: every pair with trn-1 in it is slow, and
  // far slower than any other. On a loaded host (CI runs tests side by side on 2 cores) a healthy
  // pair's single run can fall under the tests' 3% too; it still measures many times the
  // throttled link's rate, which is what tells the nodes apart.
  const Json& report = check["localisation"];
  EXPECT_GT(report["reference_busbw"]["all_reduce"].get<double>(), 0) << report.dump(2);
  ASSERT_EQ(report["tests"].size(), 6u) << report.dump(2);
  const auto worst_busbw = [](const Json& test) {
    double worst = std::numeric_limits<double>::infinity();
    for (const auto& [collective, busbw] : test["busbw"].items()) worst = std::min(worst, busbw.get<double>());
    return worst;
  };
  double fastest_with_trn1 = 0, slowest_without = std::numeric_limits<double>::infinity();
  for (const Json& t : report["tests"]) {
    const bool with_trn1 = t["nodes"][0] == "trn-1" || t["nodes"][1] == "trn-1";
    if (with_trn1) {
      EXPECT_NE(t["outcome"], "passed") << t.dump();
      fastest_with_trn1 = std::max(fastest_with_trn1, worst_busbw(t));
    } else {
      slowest_without = std::min(slowest_without, worst_busbw(t));
    }
  }
  std::cout << "pair tests: slowest pair without trn-1 " << slowest_without / 1e6 << " MB/s, fastest with it "
            << fastest_with_trn1 / 1e6 << " MB/s\n";
  EXPECT_GT(slowest_without, 4 * fastest_with_trn1) << report.dump(2);
}

TEST(Health, AJobWhoseNodeFailsPreflightStartsElsewhereWithoutUsingARetry) {
  Cluster cluster;
  cluster.start_daemon();
  cluster.start_agent("trn-0", AgentSpec{.cores = 4, .extra_flags = {"--fault", "link=drop"}});
  cluster.start_agent("trn-1");
  cluster.wait_for_nodes(2);  // registration tests the cores only: a dropped link passes it
  const auto id = cluster.submit({{"name", "needs-two"}, {"nodes", 2}, {"command", {{"argv", {"/bin/true"}}}}});
  const std::string path = "/v1/jobs/" + std::to_string(id);
  ASSERT_TRUE(eventually([&] { return cluster.api("GET", path + "/attempts").body["attempts"].size() == 1 &&
                                      cluster.api("GET", path).body["state"] == "PENDING"; },
                         30s))
      << cluster.api("GET", path).body.dump(2);
  cluster.start_agent("trn-2");
  cluster.start_agent("trn-3");
  const Json job = cluster.wait_job_state(id, "SUCCEEDED", 30s);
  EXPECT_EQ(job["attempts"], 1) << "the failed pre-flight used one of the job's attempts:\n" << job.dump(2);
  const Json attempts = cluster.api("GET", path + "/attempts").body["attempts"];
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0]["failure_class"], "health_failed") << attempts.dump(2);
  EXPECT_TRUE(attempts[0]["infrastructure"].get<bool>());
  for (const auto& node : attempts[1]["nodes"]) {
    EXPECT_TRUE(node == "trn-2" || node == "trn-3") << attempts.dump(2);
  }
}

TEST(Health, APeriodicCheckCatchesAFaultInjectedAfterRegistrationAndTheNodeReturnsOnlyAfterPassing) {
  Cluster cluster;
  std::vector<std::string> flags = kNoisyHostFlags;
  flags.insert(flags.end(), {"--health-interval-s", "1"});
  cluster.start_daemon(flags);
  for (int i = 0; i < 3; ++i) cluster.start_agent("trn-" + std::to_string(i));
  cluster.wait_for_nodes(3);
  ASSERT_EQ(cluster.api("PUT", "/v1/nodes/trn-1/faults", R"({"faults":["core:1=corrupt"]})").status, 202);
  ASSERT_TRUE(eventually([&] { return node_named(cluster, "trn-1")["state"] == "UNHEALTHY"; }, 30s))
      << node_named(cluster, "trn-1").dump(2);
  const Json bad = node_named(cluster, "trn-1");
  EXPECT_NE(bad["state_reason"].get<std::string>().find("core 1"), std::string::npos) << bad.dump(2);
  EXPECT_EQ(node_named(cluster, "trn-0")["state"], "HEALTHY");
  EXPECT_EQ(node_named(cluster, "trn-2")["state"], "HEALTHY");

  // An operator drains it, repairs it, and undrains it: it must pass its tests to come back.
  const auto drained = cluster.api("POST", "/v1/nodes/trn-1/drain", R"({"reason":"replacing core 1"})");
  ASSERT_EQ(drained.status, 200) << drained.body.dump();
  EXPECT_EQ(drained.body["state"], "DRAINED");
  ASSERT_EQ(cluster.api("DELETE", "/v1/nodes/trn-1/faults").status, 202);
  ASSERT_TRUE(eventually([&] { return node_named(cluster, "trn-1")["faults"].empty(); }, 10s));
  const auto undrained = cluster.api("POST", "/v1/nodes/trn-1/undrain");
  ASSERT_EQ(undrained.status, 200) << undrained.body.dump();
  EXPECT_EQ(undrained.body["state"], "HEALTHY") << "a drained node returns at once";
  EXPECT_EQ(cluster.api("POST", "/v1/nodes/trn-1/undrain").status, 409);
}

// A fresh cluster's health matrix fills by itself: with the hourly default interval, the first
// periodic check runs --health-first-check-s after start, once three idle nodes can be compared.
TEST(Health, AFreshClusterOfThreeNodesGetsAPeriodicCheckWithPairTestsWithoutAskingOrAnHourWait) {
  Cluster cluster;
  std::vector<std::string> flags = kNoisyHostFlags;
  flags.insert(flags.end(), {"--health-first-check-s", "1"});
  cluster.start_daemon(flags);
  for (int i = 0; i < 3; ++i) cluster.start_agent("trn-" + std::to_string(i));
  cluster.wait_for_nodes(3);
  Json periodic;
  ASSERT_TRUE(eventually(
      [&] {
        const Json checks = cluster.api("GET", "/v1/healthchecks?limit=20").body["checks"];
        for (const Json& check : checks) {
          if (check.value("kind", "") == "periodic" && check.value("state", "RUNNING") != "RUNNING") periodic = check;
        }
        return !periodic.is_null();
      },
      60s))
      << cluster.api("GET", "/v1/healthchecks?limit=20").body.dump(2);
  EXPECT_EQ(periodic["nodes"].size(), 3u) << periodic.dump(2);
  EXPECT_FALSE(periodic["localisation"]["tests"].empty()) << "pair tests fill the matrix:\n" << periodic.dump(2);
}

}  // namespace
}  // namespace trainyard::testing

namespace trainyard::testing {
namespace {

TEST(Canaries, RunOnScheduleAndAFailureIsASystemProblem) {
  Cluster cluster;
  cluster.start_daemon({"--canary-interval-s", "1", "--canary-nodes", "2"});
  cluster.start_agent("trn-0");
  cluster.start_agent("trn-1");
  cluster.wait_for_nodes(2);
  const auto has_canary = [&](const std::string& state) {
    const Json list = cluster.api("GET", "/v1/canaries").body["canaries"];
    for (const auto& c : list) {
      if (c["state"] == state) return c;
    }
    return Json();
  };
  ASSERT_TRUE(eventually([&] { return !has_canary("SUCCEEDED").is_null(); }, 30s))
      << cluster.api("GET", "/v1/canaries").body.dump(2);
  const Json good = has_canary("SUCCEEDED");
  EXPECT_EQ(good["user"], "system");
  EXPECT_EQ(good["share"], "system");
  EXPECT_EQ(good["spec"]["nodes"], 2);

  ASSERT_EQ(cluster.api("PUT", "/v1/nodes/trn-1/faults", R"({"faults":["link=drop"]})").status, 202);
  ASSERT_TRUE(eventually([&] { return !has_canary("FAILED").is_null(); }, 30s))
      << cluster.api("GET", "/v1/canaries").body.dump(2);
  const Json bad = has_canary("FAILED");
  EXPECT_EQ(bad["failure_class"], "collective_timeout") << bad.dump(2);
  EXPECT_NE(cluster.daemon_log().find("event=canary_failed job=" + bad["id"].dump()), std::string::npos);
  // Its nodes are taken out and tested; the one that drops its link does not pass.
  const auto after_canary = [&](const std::string& node) {
    const Json history = cluster.api("GET", "/v1/nodes/" + node + "/health").body;
    for (const auto& check : history["checks"]) {
      if (check["kind"] == "after_canary") return check;
    }
    return Json();
  };
  ASSERT_TRUE(eventually([&] { return !after_canary("trn-0").is_null() && !after_canary("trn-1").is_null(); }, 30s))
      << cluster.api("GET", "/v1/nodes").body.dump(2);
  EXPECT_NE(after_canary("trn-1")["verdict"], "HEALTHY") << after_canary("trn-1").dump(2);
  EXPECT_NE(cluster.api("GET", "/v1/nodes/trn-1").body["state"], "HEALTHY");
}

// `trainyard canary run`: an operator asks for a canary without waiting for the schedule (an hour
// by default), and sees it end; a second while it runs is refused saying why.
TEST(Canaries, AnOperatorRunsOneNowAndTheListSaysWhenTheNextIsDue) {
  Cluster cluster;
  cluster.start_daemon({"--canary-interval-s", "3600", "--canary-nodes", "2"});
  cluster.start_agent("trn-0");
  cluster.start_agent("trn-1");
  cluster.wait_for_nodes(2);
  const auto run = cluster.api("POST", "/v1/canaries");
  ASSERT_EQ(run.status, 201) << run.body.dump();
  const std::int64_t id = run.body["id"];
  EXPECT_EQ(run.body["user"], "system");
  const auto again = cluster.api("POST", "/v1/canaries");
  EXPECT_EQ(again.status, 409) << again.body.dump();
  EXPECT_NE(again.body.dump().find("running already"), std::string::npos) << again.body.dump();
  cluster.wait_job_state(id, "SUCCEEDED", 60s);
  const Json listed = cluster.api("GET", "/v1/canaries").body;
  ASSERT_FALSE(listed["canaries"].empty());
  EXPECT_EQ(listed["canaries"][0]["id"], id);
  ASSERT_TRUE(listed["next_run_at"].is_string()) << listed.dump(2);
  const std::string audit = cluster.api("GET", "/v1/audit").body.dump();
  EXPECT_NE(audit.find("canary.run"), std::string::npos) << "audited: " << audit;
}

}  // namespace
}  // namespace trainyard::testing
