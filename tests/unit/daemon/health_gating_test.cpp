// Registration gating and timeouts of health checks, with fake agents and fake time.
#include <gtest/gtest.h>

#include "tests/unit/daemon/accelerator_reports.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

JobManagerConfig gated_config() {
  JobManagerConfig c = test_config();
  c.registration_checks = true;
  return c;
}

// Two cores that pass, each timed at `gemm_ms`.
Json timed_report(double gemm_ms) {
  healthcheck::AcceleratorReport report;
  for (int core = 0; core < 2; ++core) {
    report.cores.push_back(healthcheck::CoreResult{
        core, {healthcheck::CheckResult{healthcheck::AcceleratorTest::gemm, healthcheck::CheckStatus::passed, 1e-7, 1e-5, 1, ""}},
        gemm_ms});
  }
  return healthcheck::to_json(report);
}

Json corrupt_report() {
  healthcheck::AcceleratorReport report;
  report.cores.push_back(healthcheck::CoreResult{
      3, {healthcheck::CheckResult{healthcheck::AcceleratorTest::gemm, healthcheck::CheckStatus::failed, 2.5, 1e-5, 1, "core 3: GEMM off by 2.5"}}});
  return healthcheck::to_json(report);
}

TEST(HealthGating, ANewNodeTakesNoWorkUntilItPassesItsRegistrationCheck) {
  Cluster c(gated_config());
  auto agent = c.connect("n1");
  EXPECT_EQ(state_of(c, "n1"), NodeState::suspect);
  const auto checks = agent->all<HealthCheckMsg>();
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].suite, HealthSuite::accelerator);
  c.submit(command_spec(1));
  EXPECT_TRUE(c.launches().empty()) << "work was placed on an untested node";

  c.send("n1", HealthResultMsg{checks[0].task_id, passing_report(), ""});
  EXPECT_EQ(state_of(c, "n1"), NodeState::healthy);
  EXPECT_EQ(c.jobs.node("n1")->node.last_check_verdict, "HEALTHY");
  EXPECT_EQ(c.launches().size(), 1u) << "the pending job did not start once the node passed";
}

// A check that finds a node as it was is no news: webhooks on node.* hear a change of state and a
// recovery, never every passing check (they used up the budget failure alerts needed).
TEST(HealthGating, OnlyAChangeOfStateMakesANodeEventNotEveryCheckThatFindsItAsItWas) {
  Cluster c(gated_config());
  auto agent = c.connect("n1");
  const auto answer_latest = [&](const Json& report) {
    c.settle();
    c.send("n1", HealthResultMsg{agent->all<HealthCheckMsg>().back().task_id, report, ""});
  };
  answer_latest(passing_report());
  ASSERT_EQ(state_of(c, "n1"), NodeState::healthy);
  const auto healthy_since = c.jobs.node("n1")->node.state_since;
  const std::size_t healthy_events = c.events_of_kind("node.healthy").size();
  for (int round = 0; round < 3; ++round) {
    c.advance(Millis(10'000));
    c.jobs.start_health_check({HealthCheckKind::periodic, {"n1"}, true, false, "daemon"});
    answer_latest(passing_report());
  }
  EXPECT_EQ(c.events_of_kind("node.healthy").size(), healthy_events) << "a passing check of a HEALTHY node made an event";
  EXPECT_EQ(c.events_of_kind("healthcheck.finished").size(), 4u) << "every check is still recorded";
  EXPECT_EQ(c.jobs.node("n1")->node.state_since, healthy_since) << "HEALTHY since its first pass";
  EXPECT_NE(c.jobs.node("n1")->node.state_reason.find("periodic"), std::string::npos) << c.jobs.node("n1")->node.state_reason;

  for (int round = 0; round < 2; ++round) {
    c.jobs.start_health_check({HealthCheckKind::periodic, {"n1"}, true, false, "daemon"});
    answer_latest(corrupt_report());
  }
  EXPECT_EQ(c.events_of_kind("node.unhealthy").size(), 1u) << "one event for the change, none for finding it again";
  c.jobs.start_health_check({HealthCheckKind::periodic, {"n1"}, true, false, "daemon"});
  answer_latest(passing_report());
  EXPECT_EQ(c.events_of_kind("node.healthy").size(), healthy_events + 1) << "a recovery is news";
}

// A node whose cores agree with each other but are all slow is found against the other nodes'
// latest figures, once there are two of them to compare with.
TEST(HealthGating, ANodeSlowAsAWholeIsSuspectAgainstTheOtherNodesSpeed) {
  Cluster c(gated_config());
  const auto check_with = [&](const std::string& node, double gemm_ms) {
    auto agent = c.connect(node);
    c.send(node, HealthResultMsg{agent->all<HealthCheckMsg>()[0].task_id, timed_report(gemm_ms), ""});
    return agent;
  };
  auto first = check_with("slow-first", 0.9);
  EXPECT_EQ(state_of(c, "slow-first"), NodeState::healthy) << "nobody to compare with yet";
  auto n1 = check_with("n1", 0.3);
  auto n2 = check_with("n2", 0.32);
  EXPECT_EQ(state_of(c, "n1"), NodeState::healthy) << "one other figure is too few to judge by";
  EXPECT_EQ(state_of(c, "n2"), NodeState::healthy) << "the median of 0.9 and 0.3 is 0.6";
  auto slow = check_with("slow", 0.9);
  EXPECT_EQ(state_of(c, "slow"), NodeState::suspect);
  const std::string reason = c.jobs.node("slow")->node.state_reason;
  EXPECT_NE(reason.find("the median of the other nodes"), std::string::npos) << reason;
  auto fast = check_with("n3", 0.31);
  EXPECT_EQ(state_of(c, "n3"), NodeState::healthy) << "slow nodes only make the others look faster";
}

TEST(HealthGating, AHelloListingAnAttemptWeNeverAssignedIsFencedAndStillTested) {
  Cluster c(gated_config());
  auto agent = c.connect("n1", 8, {AttemptReport{4242, 1, 100, std::nullopt, "forward"}});
  const auto kills = agent->kills();
  ASSERT_EQ(kills.size(), 1u) << "the invented attempt is fenced";
  EXPECT_EQ(kills[0].attempt_id, 4242);
  EXPECT_EQ(state_of(c, "n1"), NodeState::suspect) << "an invented attempt must not skip the registration check";
  EXPECT_EQ(agent->all<HealthCheckMsg>().size(), 1u);
  c.submit(command_spec(1));
  EXPECT_TRUE(c.launches().empty()) << "work was placed on an untested node";
}

TEST(HealthGating, ANodeThatReconnectsRunningOurAttemptKeepsItAndIsNotRetested) {
  Cluster c(gated_config());
  auto first = c.connect("n1");
  c.send("n1", HealthResultMsg{first->all<HealthCheckMsg>()[0].task_id, passing_report(), ""});
  const Job job = c.submit(command_spec(1));
  ASSERT_EQ(first->launches().size(), 1u);
  const AttemptId attempt = first->launches()[0].attempt_id;
  c.started("n1", attempt);
  c.jobs.agent_gone("n1", first.get());

  // Besides ours, it lists an invented attempt: only ours counts, the other is fenced.
  auto again = c.connect("n1", 8, {AttemptReport{attempt, job.id, 3, std::nullopt, ""}, AttemptReport{9999, 1, 1, std::nullopt, ""}});
  EXPECT_EQ(state_of(c, "n1"), NodeState::healthy);
  EXPECT_TRUE(again->all<HealthCheckMsg>().empty()) << "its cores are busy with our attempt";
  ASSERT_EQ(again->kills().size(), 1u);
  EXPECT_EQ(again->kills()[0].attempt_id, 9999);
  EXPECT_EQ(c.jobs.active_job(job.id)->state, JobState::running);
}

TEST(HealthGating, AnotherNodesAttemptDoesNotCountAsOurs) {
  Cluster c(gated_config());
  auto a1 = c.connect("n1");
  c.send("n1", HealthResultMsg{a1->all<HealthCheckMsg>()[0].task_id, passing_report(), ""});
  const Job job = c.submit(command_spec(1));
  ASSERT_EQ(a1->launches().size(), 1u);
  const AttemptId attempt = a1->launches()[0].attempt_id;

  auto a2 = c.connect("n2", 8, {AttemptReport{attempt, job.id, 3, std::nullopt, ""}});
  EXPECT_EQ(state_of(c, "n2"), NodeState::suspect);
  EXPECT_EQ(a2->all<HealthCheckMsg>().size(), 1u);
  ASSERT_EQ(a2->kills().size(), 1u) << "n2 does not run n1's rank";
  EXPECT_TRUE(a1->kills().empty()) << "n1's rank is untouched";
}

TEST(HealthGating, AFailedCoreMakesTheNodeUnhealthyWithTheCoreNamed) {
  Cluster c(gated_config());
  auto agent = c.connect("n1");
  c.send("n1", HealthResultMsg{agent->all<HealthCheckMsg>()[0].task_id, corrupt_report(), ""});
  const Node node = c.jobs.node("n1")->node;
  EXPECT_EQ(node.state, NodeState::unhealthy);
  EXPECT_NE(node.state_reason.find("core 3"), std::string::npos) << node.state_reason;
}

TEST(HealthGating, AnAgentThatDoesNotAnswerIsUnhealthyAfterTheTaskTimeout) {
  Cluster c(gated_config());
  c.connect("n1");
  c.advance(Millis(9000));
  EXPECT_EQ(state_of(c, "n1"), NodeState::suspect);
  c.heartbeat("n1");
  c.advance(Millis(1500));
  const Node node = c.jobs.node("n1")->node;
  EXPECT_EQ(node.state, NodeState::unhealthy);
  EXPECT_NE(node.state_reason.find("no health result"), std::string::npos) << node.state_reason;
}

TEST(HealthGating, AResultForAnotherNodesTaskIsIgnored) {
  Cluster c(gated_config());
  auto a = c.connect("n1");
  c.connect("n2");
  c.send("n2", HealthResultMsg{a->all<HealthCheckMsg>()[0].task_id, corrupt_report(), ""});
  EXPECT_EQ(state_of(c, "n1"), NodeState::suspect);
}

}  // namespace
}  // namespace trainyard::daemon::testing
