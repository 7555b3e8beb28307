// A failed canary takes its nodes out until they pass a health check, with fake agents
// and fake time.
#include <gtest/gtest.h>
#include <signal.h>

#include "daemon/canary.h"
#include "tests/unit/daemon/accelerator_reports.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

JobManagerConfig canary_config(int canary_nodes, int max_infra_retries = 2) {
  JobManagerConfig config = test_config();
  config.canary_interval = Millis(1000);  // shorter than the node timeout: no heartbeats needed to reach it
  config.canary_nodes = canary_nodes;
  config.max_infra_retries = max_infra_retries;
  return config;
}

// Runs the canary schedule once; returns the canary's first attempt, started on its nodes.
Attempt start_canary(Cluster& c) {
  c.advance(Millis(1000));
  c.jobs.tick();
  c.settle();
  const auto attempts = c.stored_attempts(1);
  EXPECT_EQ(attempts.size(), 1u) << "the canary was not placed";
  if (attempts.empty()) return {};
  EXPECT_EQ(c.stored_job(1)->user, kCanaryUser);
  for (const auto& node : attempts[0].nodes) c.started(node, attempts[0].id);
  return attempts[0];
}

TEST(Canary, AFailedCanarysNodesAreSuspectUntilTheyPassTheirCheck) {
  Cluster c(canary_config(2));
  c.connect("n1");
  c.connect("n2");
  const Attempt attempt = start_canary(c);
  for (const auto& node : attempt.nodes) c.exited(node, attempt.id, 1, std::nullopt, "all-reduce timed out");
  ASSERT_EQ(c.stored_job(1)->state, JobState::failed);

  for (const std::string node : {"n1", "n2"}) {
    const Node stored = c.jobs.node(node)->node;
    EXPECT_EQ(stored.state, NodeState::suspect) << node;
    EXPECT_NE(stored.state_reason.find("canary job 1 failed"), std::string::npos) << stored.state_reason;
    const auto checks = c.agents.at(node)->all<HealthCheckMsg>();
    ASSERT_EQ(checks.size(), 1u) << node << " is not tested";
    EXPECT_EQ(checks[0].suite, HealthSuite::accelerator);
  }
  const auto failed = c.events_of_kind("canary.failed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_NE(failed[0].message.find("SUSPECT until they pass a health check: n1,n2"), std::string::npos) << failed[0].message;
  EXPECT_EQ(c.events_of_kind("node.suspect").size(), 2u);
  const auto check = c.jobs.health().find(1);
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(to_string(check->request.kind), "after_canary");
  EXPECT_TRUE(check->request.collective) << "the canary's collectives are what failed";
  EXPECT_EQ(check->request.requested_by, "canary job 1");

  // Submitted work waits for the verdict.
  c.submit(command_spec(1));
  EXPECT_TRUE(c.stored_attempts(2).empty()) << "work was placed on a suspect node";
}

TEST(Canary, ANodeReturnsToServiceOnlyByPassingItsCheck) {
  Cluster c(canary_config(1));
  c.connect("n1");
  const Attempt attempt = start_canary(c);
  c.exited("n1", attempt.id, std::nullopt, SIGSEGV, "crashed");
  ASSERT_EQ(state_of(c, "n1"), NodeState::suspect);
  const auto checks = c.agents.at("n1")->all<HealthCheckMsg>();
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_FALSE(c.jobs.health().find(1)->request.collective) << "one node has no collective to test";
  c.send("n1", HealthResultMsg{checks[0].task_id, passing_report(), ""});
  EXPECT_EQ(state_of(c, "n1"), NodeState::healthy);
  EXPECT_NE(c.jobs.node("n1")->node.state_reason.find("(after_canary)"), std::string::npos)
      << c.jobs.node("n1")->node.state_reason;
}

TEST(Canary, ANodeThatFailsItsCheckIsUnhealthy) {
  Cluster c(canary_config(1));
  c.connect("n1");
  const Attempt attempt = start_canary(c);
  c.exited("n1", attempt.id, 1, std::nullopt, "loss is NaN");
  const auto checks = c.agents.at("n1")->all<HealthCheckMsg>();
  ASSERT_EQ(checks.size(), 1u);
  c.send("n1", HealthResultMsg{checks[0].task_id, wrong_gemm_report(), ""});
  EXPECT_EQ(state_of(c, "n1"), NodeState::unhealthy);
  EXPECT_NE(c.jobs.node("n1")->node.state_reason.find("core 0"), std::string::npos);
}

TEST(Canary, ACancelledCanaryLeavesItsNodesInService) {
  Cluster c(canary_config(1));
  c.connect("n1");
  const Attempt attempt = start_canary(c);
  c.jobs.cancel(1, [](JobManager::CancelResult, std::optional<Job>) {});
  c.settle();
  c.exited("n1", attempt.id, std::nullopt, SIGTERM, "killed by the daemon");
  EXPECT_EQ(c.stored_job(1)->state, JobState::cancelled);
  EXPECT_EQ(state_of(c, "n1"), NodeState::healthy);
  EXPECT_TRUE(c.agents.at("n1")->all<HealthCheckMsg>().empty());
}

// n2 stops heartbeating while the canary runs on n1 and n2; the daemon stops n1's rank.
void lose_n2(Cluster& c, const Attempt& attempt) {
  for (int i = 0; i < 6; ++i) {
    c.advance(Millis(1000));
    c.heartbeat("n1", {AttemptReport{attempt.id, attempt.job_id, i, std::nullopt, "all-reduce"}});
    if (c.agents.contains("n3")) c.heartbeat("n3");
    c.jobs.tick();
    c.settle();
  }
  ASSERT_EQ(state_of(c, "n2"), NodeState::down);
  c.exited("n1", attempt.id, std::nullopt, SIGTERM, "killed by the daemon");
}

TEST(Canary, WhenANodeWasLostTheRanksThatDiedOfTheKillAreNotSuspected) {
  Cluster c(canary_config(2, 0));
  c.connect("n1");
  c.connect("n2");
  const Attempt attempt = start_canary(c);
  lose_n2(c, attempt);
  const auto job = c.stored_job(1);
  ASSERT_EQ(job->state, JobState::failed);
  EXPECT_EQ(job->failure_class, "node_lost");
  EXPECT_EQ(state_of(c, "n1"), NodeState::healthy) << "n1 only died of the kill that followed n2's loss";
  EXPECT_TRUE(c.agents.at("n1")->all<HealthCheckMsg>().empty());
  EXPECT_EQ(state_of(c, "n2"), NodeState::down) << "the lost node keeps its state";
  ASSERT_EQ(c.events_of_kind("canary.failed").size(), 1u);
}

TEST(Canary, ACanaryThatSucceedsOnARetryShowsNoFailureClass) {
  Cluster c(canary_config(2));
  c.connect("n1");
  c.connect("n2");
  c.connect("n3");
  const Attempt first = start_canary(c);
  ASSERT_EQ(first.nodes, (std::vector<std::string>{"n1", "n2"}));
  lose_n2(c, first);
  EXPECT_EQ(c.stored_job(1)->failure_class, "node_lost") << "pending on its retry, it says why";
  for (int i = 0; i < 4 && c.stored_attempts(1).size() < 2; ++i) {
    c.heartbeat("n1");
    c.heartbeat("n3");
    c.advance(Millis(2000));
    c.jobs.tick();
    c.settle();
  }
  const auto attempts = c.stored_attempts(1);
  ASSERT_EQ(attempts.size(), 2u) << "the canary was not retried";
  for (const auto& node : attempts[1].nodes) c.started(node, attempts[1].id);
  for (const auto& node : attempts[1].nodes) c.exited(node, attempts[1].id, 0);
  const auto job = c.stored_job(1);
  EXPECT_EQ(job->state, JobState::succeeded);
  EXPECT_EQ(job->failure_class, "") << "a canary's class is its final attempt's";
  EXPECT_EQ(to_json(*job)["failure_class"], "");
  EXPECT_EQ(c.stored_attempts(1)[0].failure_class, "node_lost") << "the first attempt keeps its own";
  EXPECT_TRUE(c.events_of_kind("canary.failed").empty());
  EXPECT_EQ(state_of(c, "n1"), NodeState::healthy);
  EXPECT_EQ(state_of(c, "n3"), NodeState::healthy);
}

}  // namespace
}  // namespace trainyard::daemon::testing
