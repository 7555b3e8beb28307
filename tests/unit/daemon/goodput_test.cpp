#include <gtest/gtest.h>

#include "daemon/goodput.h"

namespace trainyard {
namespace {

TimePoint at_s(double s) { return from_unix_ms(1'800'000'000'000 + static_cast<std::int64_t>(s * 1000)); }

Attempt attempt(AttemptState state, double created, double started, double last_progress, double ended,
                std::int64_t steps, std::optional<std::string> resumed_from = std::nullopt) {
  Attempt a;
  a.nodes = {"a", "b"};
  a.cores_per_node = 2;  // 4 cores in all
  a.state = state;
  a.created_at = at_s(created);
  a.started_at = at_s(started);
  a.last_progress_at = at_s(last_progress);
  a.ended_at = at_s(ended);
  a.steps_completed = steps;
  a.resumed_from = std::move(resumed_from);
  return a;
}

TEST(Goodput, ARunWithoutFailuresLosesOnlyItsStart) {
  const std::vector<Attempt> one = {attempt(AttemptState::succeeded, 0, 2, 100, 100, 100)};
  const Goodput g = job_goodput(one, at_s(200));
  EXPECT_DOUBLE_EQ(g.allocated_core_s, 400);
  EXPECT_DOUBLE_EQ(g.start_core_s, 8);
  EXPECT_DOUBLE_EQ(g.productive_core_s, 392);
  EXPECT_DOUBLE_EQ(g.ratio(), 0.98);
}

TEST(Goodput, StepsPastTheResumedCheckpointAreRedoneAndAHangIsStalled) {
  // Attempt 1 reached step 60 by t=62 and hung until it was killed at t=80; attempt 2 resumed from
  // the checkpoint at step 50 and finished 100 steps.
  const std::vector<Attempt> two = {
      attempt(AttemptState::failed, 0, 2, 62, 80, 60),
      attempt(AttemptState::succeeded, 85, 87, 137, 137, 100, "/ckpt/job-1/step-0000000050"),
  };
  const Goodput g = job_goodput(two, at_s(200));
  EXPECT_DOUBLE_EQ(g.allocated_core_s, 80 * 4 + 52 * 4);
  EXPECT_DOUBLE_EQ(g.redone_core_s, 60 * 4 * (10.0 / 60));  // steps 51..60, at attempt 1's pace
  EXPECT_DOUBLE_EQ(g.stalled_core_s, 18 * 4);
  EXPECT_DOUBLE_EQ(g.start_core_s, 2 * 4 + 2 * 4);
  EXPECT_DOUBLE_EQ(g.productive_core_s, 60 * 4 * (50.0 / 60) + 50 * 4);
  EXPECT_NEAR(g.other_core_s, 0, 1e-9);
}

TEST(Goodput, AnAttemptThatNeverStartedIsAllStartup) {
  Attempt preflight_failed = attempt(AttemptState::failed, 0, 0, 0, 5, 0);
  preflight_failed.started_at.reset();
  const std::vector<Attempt> one = {preflight_failed};
  const Goodput g = job_goodput(one, at_s(10));
  EXPECT_DOUBLE_EQ(g.start_core_s, 20);
  EXPECT_DOUBLE_EQ(g.ratio(), 0);
}

TEST(Goodput, CheckpointStepsAreReadFromThePath) {
  EXPECT_EQ(checkpoint_step("/c/job-3/step-0000000040"), 40);
  EXPECT_EQ(checkpoint_step("/c/job-3/model"), std::nullopt);
}

}  // namespace
}  // namespace trainyard
