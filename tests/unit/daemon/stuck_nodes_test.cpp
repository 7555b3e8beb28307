// A stuck attempt's hung nodes are tested before its retry is decided: a node that fails
// makes the hang an infrastructure failure. Fake agents, fake time.
#include <gtest/gtest.h>

#include "tests/unit/daemon/accelerator_reports.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

struct StuckJob {
  JobId job = 0;
  AttemptId attempt = 0;
  std::string hung;     // rank 0's node: blocked in forward
  std::string waiting;  // rank 1's node: waiting for it in all-reduce
};

// A 2-node job whose rank 0 stops in "forward" at step 5 while rank 1 waits in all-reduce, until
// the daemon kills it as stuck and both ranks exit.
StuckJob run_until_stuck(Cluster& c, int attempts) {
  JobSpec spec = command_spec(2, attempts);
  spec.stuck_after_s = 10;
  StuckJob s;
  s.job = c.submit(spec).id;
  const LaunchMsg launch = c.agents.at("n1")->launches().at(0);
  s.attempt = launch.attempt_id;
  const auto nodes = c.nodes_of(s.attempt);
  s.hung = nodes.at(0);
  s.waiting = nodes.at(1);
  c.started(s.hung, s.attempt);
  c.started(s.waiting, s.attempt);
  for (int second = 0; second <= 12; second += 2) {
    c.heartbeat(s.hung, {AttemptReport{s.attempt, s.job, 5, std::nullopt, "forward"}});
    c.heartbeat(s.waiting, {AttemptReport{s.attempt, s.job, 5, std::nullopt, "all-reduce"}});
    c.advance(Millis(2000));
    c.jobs.tick();
    c.settle();
  }
  EXPECT_FALSE(c.agents.at(s.hung)->kills().empty()) << "the attempt was not stopped as stuck";
  c.exited(s.hung, s.attempt, std::nullopt, 15, "terminated");
  c.exited(s.waiting, s.attempt, std::nullopt, 15, "terminated");
  return s;
}

class StuckNodes : public ::testing::Test {
 protected:
  void SetUp() override {
    c.connect("n1");
    c.connect("n2");
  }
  Cluster c;
};

TEST_F(StuckNodes, AHangOnANodeThatThenFailsItsCheckIsAnInfrastructureFailure) {
  c.connect("n3");  // somewhere for the retry to go
  const StuckJob s = run_until_stuck(c, 1);

  // Only the node that hung is tested; the attempt waits for its verdict.
  EXPECT_TRUE(c.agents.at(s.waiting)->all<HealthCheckMsg>().empty());
  const auto checks = c.agents.at(s.hung)->all<HealthCheckMsg>();
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].suite, HealthSuite::accelerator);
  EXPECT_EQ(c.stored_attempts(s.job).at(0).state, AttemptState::running);

  c.send(s.hung, HealthResultMsg{checks[0].task_id, hung_gemm_report(), ""});
  const Attempt attempt = c.stored_attempts(s.job).at(0);
  EXPECT_EQ(attempt.failure_class, "stuck");
  EXPECT_TRUE(attempt.infrastructure);
  EXPECT_NE(attempt.reason.find("then " + s.hung + " failed health check"), std::string::npos) << attempt.reason;
  EXPECT_NE(attempt.reason.find("budget"), std::string::npos) << attempt.reason;
  // With one attempt allowed, only an infrastructure retry keeps the job going; the node is out.
  const Job job = *c.stored_job(s.job);
  EXPECT_EQ(job.state, JobState::pending) << job.reason;
  EXPECT_EQ(job.infra_retries, 1);
  EXPECT_NE(job.reason.find("infrastructure failure (stuck)"), std::string::npos) << job.reason;
  EXPECT_EQ(c.jobs.node(s.hung)->node.state, NodeState::unhealthy);
}

TEST_F(StuckNodes, AHangOnANodeThatPassesItsCheckIsTheJobsOwn) {
  const StuckJob s = run_until_stuck(c, 1);
  const auto checks = c.agents.at(s.hung)->all<HealthCheckMsg>();
  ASSERT_EQ(checks.size(), 1u);
  c.send(s.hung, HealthResultMsg{checks[0].task_id, passing_report(), ""});

  const Attempt attempt = c.stored_attempts(s.job).at(0);
  EXPECT_EQ(attempt.failure_class, "stuck");
  EXPECT_FALSE(attempt.infrastructure);
  EXPECT_EQ(c.stored_job(s.job)->state, JobState::failed);
  EXPECT_EQ(c.jobs.node(s.hung)->node.state, NodeState::healthy);
}

TEST_F(StuckNodes, ANodeThatNeverAnswersItsCheckIsUnhealthyAndTheAttemptStillEnds) {
  const StuckJob s = run_until_stuck(c, 1);
  ASSERT_EQ(c.agents.at(s.hung)->all<HealthCheckMsg>().size(), 1u);
  for (int i = 0; i < 6; ++i) {  // past the task timeout (10 s), with both nodes alive
    c.heartbeat(s.hung);
    c.heartbeat(s.waiting);
    c.advance(Millis(2000));
  }
  const Attempt attempt = c.stored_attempts(s.job).at(0);
  EXPECT_EQ(attempt.state, AttemptState::failed);
  EXPECT_TRUE(attempt.infrastructure) << attempt.reason;
  EXPECT_EQ(c.jobs.node(s.hung)->node.state, NodeState::unhealthy);
}

TEST_F(StuckNodes, CancellingWhileTheNodeIsTestedEndsTheJobAtOnce) {
  const StuckJob s = run_until_stuck(c, 1);
  std::optional<JobManager::CancelResult> result;
  c.jobs.cancel(s.job, [&](JobManager::CancelResult r, std::optional<Job>) { result = r; });
  c.settle();
  ASSERT_EQ(result, JobManager::CancelResult::cancelling);
  EXPECT_EQ(c.stored_job(s.job)->state, JobState::cancelled);
}

}  // namespace
}  // namespace trainyard::daemon::testing
