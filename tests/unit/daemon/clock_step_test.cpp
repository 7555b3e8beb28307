// The system clock stepped an hour either way (NTP, an operator) while work runs: stored and shown
// times follow it, but intervals run on the monotonic clock, so a healthy job is not killed as
// stuck, its node is not declared down, and neither a timeout nor a retry backoff is delayed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

class ClockStepTest : public ::testing::TestWithParam<int> {
 protected:
  Millis jump() const { return std::chrono::hours(GetParam()); }

  // Submits `spec` to a one-node cluster and starts its attempt.
  AttemptId start(JobSpec spec) {
    c.connect("n1");
    job = c.submit(std::move(spec)).id;
    const auto attempts = c.stored_attempts(job);
    EXPECT_EQ(attempts.size(), 1u) << "the job was not placed";
    const AttemptId attempt = attempts.empty() ? 0 : attempts.back().id;
    c.started("n1", attempt);
    return attempt;
  }
  // Time passes by `by`: the agent heartbeats and the daemon ticks every second, as they do live (a
  // much longer gap between ticks is the daemon's own pause: daemon/own_pauses.h). The last
  // heartbeat reports `step`, the ones before it the step reported before.
  void pass(Millis by, AttemptId attempt, std::int64_t step) {
    for (Millis left = by; left > Millis(0);) {
      const Millis beat = std::min(left, Millis(1000));
      left -= beat;
      c.advance(beat);
      c.heartbeat("n1", {AttemptReport{attempt, job, left > Millis(0) ? reported_ : step, std::nullopt, "forward"}});
      c.jobs.tick();
      c.settle();
    }
    reported_ = step;
  }

  Cluster c;
  JobId job = 0;
  std::int64_t reported_ = 0;
};

TEST_P(ClockStepTest, AJobThatKeepsAdvancingIsNotStuckAndItsNodeNotDown) {
  JobSpec spec = command_spec(1);
  spec.stuck_after_s = 60;
  const AttemptId attempt = start(spec);
  std::int64_t step = 0;
  for (int i = 0; i < 3; ++i) pass(Millis(10000), attempt, ++step);
  c.clock.step_system_clock(jump());
  for (int i = 0; i < 9; ++i) pass(Millis(10000), attempt, ++step);
  EXPECT_TRUE(c.agents["n1"]->kills().empty()) << "a job advancing every 10 s was killed";
  EXPECT_FALSE(c.agents["n1"]->disconnected) << c.agents["n1"]->disconnect_reason;
  EXPECT_EQ(c.jobs.node("n1")->node.state, NodeState::healthy);
  EXPECT_EQ(c.jobs.node("n1")->node.last_heartbeat, c.clock.system_now()) << "shown times follow the system clock";
  EXPECT_EQ(c.stored_attempts(job).back().diagnosis, "");

  // A rank that stops is still caught a whole stuck_after_s after its last advance, not sooner.
  pass(Millis(59999), attempt, step);
  EXPECT_TRUE(c.agents["n1"]->kills().empty()) << "stuck before stuck_after_s passed";
  pass(Millis(1), attempt, step);
  ASSERT_EQ(c.agents["n1"]->kills().size(), 1u);
  EXPECT_THAT(c.agents["n1"]->kills()[0].reason, HasSubstr("stuck"));
}

TEST_P(ClockStepTest, TheTimeoutIsNeitherDelayedNorBroughtForward) {
  JobSpec spec = command_spec(1);
  spec.timeout_s = 30;
  const AttemptId attempt = start(spec);
  pass(Millis(10000), attempt, 1);
  c.clock.step_system_clock(jump());
  pass(Millis(20000), attempt, 2);
  EXPECT_TRUE(c.agents["n1"]->kills().empty()) << "killed before timeout_s had passed";
  pass(Millis(1), attempt, 3);
  ASSERT_EQ(c.agents["n1"]->kills().size(), 1u) << "timeout_s passed without a kill";
  EXPECT_THAT(c.agents["n1"]->kills()[0].reason, HasSubstr("timeout"));
}

TEST_P(ClockStepTest, TheRetryBackoffIsNotDelayed) {
  const AttemptId attempt = start(command_spec(1, 2));
  c.exited("n1", attempt, 1);
  ASSERT_TRUE(c.jobs.active_job(job)->not_before) << "the job waits out a backoff of 2 s";
  c.clock.step_system_clock(jump());
  c.advance(Millis(1999));
  c.heartbeat("n1");
  c.jobs.tick();
  c.settle();
  // A clock stepped forward may end the backoff early (the scheduler reads the system clock); one
  // stepped back must not hold the job for another hour.
  if (jump() < Millis(0)) {
    EXPECT_EQ(c.agents["n1"]->launches().size(), 1u) << "placed again before its backoff ended";
  }
  c.advance(Millis(1));
  c.jobs.tick();
  c.settle();
  EXPECT_EQ(c.agents["n1"]->launches().size(), 2u) << "the retry waited past its backoff";
}

INSTANTIATE_TEST_SUITE_P(BackAndForward, ClockStepTest, ::testing::Values(-1, 1),
                         [](const auto& info) { return info.param < 0 ? "SteppedBack" : "SteppedForward"; });

}  // namespace
}  // namespace trainyard::daemon::testing
