#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/telemetry/goodput.h"
#include "tests/unit/daemon/seconds_clock.h"

namespace trainyard::daemon {
namespace {

using testing::at_s;

// 4 cores in all; launched at `created`, first step at `started` + 1 step unless set otherwise.
Attempt attempt(AttemptState state, double created, double started, double last_progress, double ended,
                std::int64_t steps, std::optional<std::string> resumed_from = std::nullopt) {
  Attempt a;
  a.nodes = {"a", "b"};
  a.cores_per_node = 2;
  a.state = state;
  a.created_at = at_s(created);
  a.launched_at = at_s(created);
  a.started_at = at_s(started);
  a.last_progress_at = at_s(last_progress);
  a.ended_at = at_s(ended);
  a.steps_completed = steps;
  a.resumed_from = std::move(resumed_from);
  return a;
}

// A job pays for its first start once: only starts after a failure are lost to restart.
TEST(Goodput, ACleanFirstAttemptLosesOnlyItsPreFlight) {
  Attempt a = attempt(AttemptState::succeeded, 0, 1, 100, 100, 98);
  a.launched_at = at_s(0.5);
  a.first_step_at = at_s(3);  // one step a second: steps 1..98 from t=2 to t=100
  const std::vector<Attempt> one = {a};
  const Goodput g = job_goodput(one, at_s(200));
  EXPECT_DOUBLE_EQ(g.allocated_core_s, 400);
  EXPECT_DOUBLE_EQ(g.preflight_core_s, 0.5 * 4);
  EXPECT_DOUBLE_EQ(g.restart_core_s, 0);
  EXPECT_DOUBLE_EQ(g.productive_core_s, 98 * 4 + 1.5 * 4);  // the steps, and the start before them
  EXPECT_DOUBLE_EQ(g.ratio(), 0.995);
  EXPECT_NEAR(g.other_core_s, 0, 1e-9);
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
  EXPECT_DOUBLE_EQ(g.restart_core_s, 2 * 4);  // the second start only
  EXPECT_DOUBLE_EQ(g.productive_core_s, 2 * 4 + 60 * 4 * (50.0 / 60) + 50 * 4);
  EXPECT_NEAR(g.other_core_s, 0, 1e-9);
}

// A survivor's checkpoint at the failure (neuron/trainer.h) makes the retry resume at the very step
// the failed attempt reached: nothing is redone, exactly, whatever the times. (The Prometheus
// counters refuse a category below zero, and refused a whole batch of jobs for a rounding error.)
TEST(Goodput, AResumeAtTheStepReachedRedoesExactlyNothing) {
  for (std::int64_t steps = 2; steps < 120; ++steps) {
    for (int ms : {1, 7, 33, 101, 997}) {
      Attempt failed = attempt(AttemptState::failed, 0, 1.3, 1.3 + steps * ms / 1000.0, 3 + steps * ms / 1000.0, steps);
      failed.first_step_at = at_s(1.3 + ms / 1000.0);
      const std::vector<Attempt> two = {
          failed, attempt(AttemptState::succeeded, 5, 6, 9, 9, steps + 3, "/ckpt/job-1/step-" + std::to_string(steps))};
      const Goodput g = job_goodput(two, at_s(10));
      ASSERT_EQ(g.redone_core_s, 0.0) << steps << " steps of " << ms << " ms";
    }
  }
}

// Attempt 2 was placed on a node lost before it launched: it chose no checkpoint and computed
// nothing, so attempt 1's steps are judged by attempt 3, which resumed from step 50.
TEST(Goodput, AnAttemptThatNeverLaunchedDoesNotMakeTheStepsBeforeItRedone) {
  Attempt never_launched = attempt(AttemptState::failed, 81, 0, 0, 84, 0);
  never_launched.launched_at.reset();
  never_launched.started_at.reset();
  never_launched.last_progress_at.reset();
  const std::vector<Attempt> three = {
      attempt(AttemptState::failed, 0, 2, 62, 80, 60),
      never_launched,
      attempt(AttemptState::succeeded, 85, 87, 137, 137, 100, "/ckpt/job-1/step-0000000050"),
  };
  const Goodput g = job_goodput(three, at_s(200));
  EXPECT_DOUBLE_EQ(g.redone_core_s, 60 * 4 * (10.0 / 60));  // steps 51..60 only
  EXPECT_DOUBLE_EQ(g.preflight_core_s, 3 * 4);
  // With no attempt after it that ran, nothing of attempt 1 was done again.
  const std::vector<Attempt> ended_there = {three[0], three[1]};
  EXPECT_DOUBLE_EQ(job_goodput(ended_there, at_s(200)).redone_core_s, 0);
  // One that launched without a checkpoint started over: everything before it was redone.
  Attempt from_scratch = three[2];
  from_scratch.resumed_from.reset();
  const std::vector<Attempt> restarted = {three[0], three[1], from_scratch};
  EXPECT_DOUBLE_EQ(job_goodput(restarted, at_s(200)).redone_core_s, 60 * 4);
}

TEST(Goodput, PreFlightIsTheTimeFromPlacementToLaunch) {
  // Placed at t=0, pre-flight until t=3, processes up at t=4, first step (2 s each) done at t=8.
  Attempt a = attempt(AttemptState::succeeded, 0, 4, 26, 26, 10);
  a.launched_at = at_s(3);
  a.first_step_at = at_s(8);
  const std::vector<Attempt> one = {a};
  const Goodput g = job_goodput(one, at_s(100));
  EXPECT_DOUBLE_EQ(g.preflight_core_s, 3 * 4);
  EXPECT_DOUBLE_EQ(g.restart_core_s, 0);                  // the job's first start: t=3 to t=6 is not lost
  EXPECT_DOUBLE_EQ(g.productive_core_s, 3 * 4 + 20 * 4);  // that, and 10 steps x 2 s
  EXPECT_NEAR(g.other_core_s, 0, 1e-9);
}

TEST(Goodput, CheckpointHoldUpsComeOutOfStepTime) {
  Attempt a = attempt(AttemptState::succeeded, 0, 0, 10, 11, 10);
  a.first_step_at = at_s(1);
  a.checkpoint_ms = 1500;  // hand-offs that held up 10 s of steps by 1.5 s
  const std::vector<Attempt> one = {a};
  const Goodput g = job_goodput(one, at_s(100));
  EXPECT_DOUBLE_EQ(g.checkpoint_core_s, 1.5 * 4);
  EXPECT_DOUBLE_EQ(g.productive_core_s, (10 + 1 - 1.5) * 4);
  EXPECT_DOUBLE_EQ(g.allocated_core_s, 11 * 4);

  // More than the step time: the rest comes out of the time after the last step, never beyond it.
  a.checkpoint_ms = 60'000;
  const std::vector<Attempt> greedy = {a};
  const Goodput h = job_goodput(greedy, at_s(100));
  EXPECT_DOUBLE_EQ(h.checkpoint_core_s, 11 * 4);
  EXPECT_DOUBLE_EQ(h.productive_core_s, 0);
}

TEST(Goodput, CheckpointTimeOfAFailedAttemptIsNotCountedAsRedone) {
  Attempt failed = attempt(AttemptState::failed, 0, 0, 20, 25, 20);
  failed.first_step_at = at_s(1);
  failed.checkpoint_ms = 2000;
  const std::vector<Attempt> two = {failed, attempt(AttemptState::succeeded, 30, 30, 40, 40, 20, "/c/step-0000000010")};
  const Goodput g = job_goodput(two, at_s(100));
  EXPECT_DOUBLE_EQ(g.checkpoint_core_s, 2 * 4);
  EXPECT_DOUBLE_EQ(g.redone_core_s, 18 * 4 * 0.5);  // the 18 s of step time left, half of it re-done
  EXPECT_DOUBLE_EQ(g.stalled_core_s, 5 * 4);
}

TEST(Goodput, AnAttemptThatNeverLaunchedIsAllPreFlight) {
  Attempt preflight_failed = attempt(AttemptState::failed, 0, 0, 0, 5, 0);
  preflight_failed.launched_at.reset();
  preflight_failed.started_at.reset();
  const std::vector<Attempt> one = {preflight_failed};
  const Goodput g = job_goodput(one, at_s(10));
  EXPECT_DOUBLE_EQ(g.preflight_core_s, 20);
  EXPECT_DOUBLE_EQ(g.ratio(), 0);
}

TEST(Goodput, AnAttemptLaunchedButNeverStartedIsRestart) {
  Attempt lost = attempt(AttemptState::failed, 0, 0, 0, 5, 0);
  lost.launched_at = at_s(1);
  lost.started_at.reset();
  const std::vector<Attempt> one = {lost};
  const Goodput g = job_goodput(one, at_s(10));
  EXPECT_DOUBLE_EQ(g.preflight_core_s, 4);
  EXPECT_DOUBLE_EQ(g.restart_core_s, 16);
}

// A command job that writes no progress: its running time is neither kept nor lost, and there is no
// goodput figure, whether it succeeded, hung or failed (it used to read 99.9 % for a hung job).
TEST(Goodput, ACommandJobWithoutStepsIsUnmeasuredAndHasNoFigure) {
  for (AttemptState state : {AttemptState::succeeded, AttemptState::failed, AttemptState::running}) {
    Attempt a = attempt(state, 0, 1, 1, 11, 0);
    a.last_progress_at.reset();
    if (state == AttemptState::running) a.ended_at.reset();
    const std::vector<Attempt> one = {a};
    const Goodput g = job_goodput(one, at_s(11));
    EXPECT_DOUBLE_EQ(g.unmeasured_core_s, 44);
    EXPECT_DOUBLE_EQ(g.productive_core_s, 0);
    EXPECT_DOUBLE_EQ(g.stalled_core_s, 0) << "a failed one's time is not all stalled";
    EXPECT_DOUBLE_EQ(g.restart_core_s, 0);
    const Json j = to_json(g);
    EXPECT_TRUE(j["goodput"].is_null()) << j.dump();
    EXPECT_THAT(j["goodput_note"].get<std::string>(), ::testing::HasSubstr("n/a: no progress reported")) << j.dump();
    EXPECT_DOUBLE_EQ(j["unmeasured_core_s"].get<double>(), 44);
  }
  // Beside an attempt that reported steps, goodput is that attempt's share of the measured time.
  Attempt silent = attempt(AttemptState::failed, 0, 1, 1, 11, 0);
  silent.last_progress_at.reset();
  const std::vector<Attempt> two = {silent, attempt(AttemptState::succeeded, 20, 20, 30, 30, 10)};
  const Goodput g = job_goodput(two, at_s(40));
  EXPECT_DOUBLE_EQ(g.unmeasured_core_s, 44);
  EXPECT_DOUBLE_EQ(g.measured_core_s(), 40);
  EXPECT_DOUBLE_EQ(to_json(g)["goodput"].get<double>(), 1.0);
}

TEST(Goodput, AFirstStepReportedBeforeTheLaunchDoesNotInventTime) {
  // Agent and daemon clocks may disagree by a little: nothing is negative, nothing is made up.
  Attempt a = attempt(AttemptState::succeeded, 0, 1, 10, 10, 10);
  a.launched_at = at_s(2);
  a.first_step_at = at_s(1.5);
  const std::vector<Attempt> one = {a};
  const Goodput g = job_goodput(one, at_s(100));
  EXPECT_GE(g.restart_core_s, 0);
  EXPECT_LE(g.productive_core_s + g.preflight_core_s + g.restart_core_s, g.allocated_core_s + 1e-9);
}

TEST(Goodput, JsonNamesEveryCause) {
  const Json j = to_json(Goodput{});
  for (const char* cause : {"preflight", "restart", "checkpoint", "redone", "stalled", "other"}) {
    EXPECT_TRUE(j["lost_core_s"].contains(cause)) << cause;
  }
  EXPECT_TRUE(j["goodput"].is_null()) << "no core-time, no figure";
}

TEST(Goodput, NoFigureWithoutCoreTimeOrForAStartUpAloneAndSaysWhy) {
  const Json pending = to_json(Goodput{});
  EXPECT_TRUE(pending["goodput"].is_null());
  EXPECT_EQ(pending["goodput_note"], "n/a: no core-time allocated yet");
  Goodput echo;  // a 6 ms job: its start-up is most of it
  echo.allocated_core_s = 0.006;
  echo.productive_core_s = 0.0003;
  echo.restart_core_s = 0.0057;
  const Json short_job = to_json(echo);
  EXPECT_TRUE(short_job["goodput"].is_null());
  EXPECT_THAT(short_job["goodput_note"].get<std::string>(), ::testing::HasSubstr("too short to judge"));
  Goodput ran;
  ran.allocated_core_s = 10;
  ran.productive_core_s = 9;
  ran.restart_core_s = 1;
  ran.other_core_s = 8.5e-14;
  const Json judged = to_json(ran);
  EXPECT_DOUBLE_EQ(judged["goodput"].get<double>(), 0.9);
  EXPECT_FALSE(judged.contains("goodput_note"));
  EXPECT_EQ(judged["lost_core_s"]["other"].get<double>(), 0.0) << "a rounding residue is nothing lost";
}


TEST(GoodputInAWindow, TakesTheWindowsShareOfEachStretchOfAnAttempt) {
  // Attempt 1 stepped from t=2 to t=62 (steps 51..60 redone later) and hung until t=80; attempt 2
  // resumed at t=85 and is still running at t=137 (the window's end).
  const std::vector<Attempt> two = {
      attempt(AttemptState::failed, 0, 2, 62, 80, 60),
      attempt(AttemptState::succeeded, 85, 87, 137, 137, 100, "/ckpt/job-1/step-0000000050"),
  };
  const Goodput g = job_goodput_in(two, at_s(32), at_s(137));
  EXPECT_DOUBLE_EQ(g.allocated_core_s, 48 * 4 + 52 * 4);
  // Half of attempt 1's stepping (30 of 60 s) falls in the window, and all of its hang.
  EXPECT_DOUBLE_EQ(g.productive_core_s, 30 * 4 * (50.0 / 60) + 50 * 4);
  EXPECT_DOUBLE_EQ(g.redone_core_s, 30 * 4 * (10.0 / 60));
  EXPECT_DOUBLE_EQ(g.stalled_core_s, 18 * 4);
  EXPECT_DOUBLE_EQ(g.restart_core_s, 2 * 4);
  EXPECT_NEAR(g.other_core_s, 0, 1e-9);
}

TEST(GoodputInAWindow, AWindowAroundEverythingIsTheWholeJobAndOneAfterItIsNothing) {
  const std::vector<Attempt> two = {
      attempt(AttemptState::failed, 0, 2, 62, 80, 60),
      attempt(AttemptState::succeeded, 85, 87, 137, 137, 100, "/ckpt/job-1/step-0000000050"),
  };
  const Goodput whole = job_goodput(two, at_s(500));
  const Goodput around = job_goodput_in(two, at_s(-10), at_s(500));
  EXPECT_DOUBLE_EQ(around.allocated_core_s, whole.allocated_core_s);
  EXPECT_DOUBLE_EQ(around.productive_core_s, whole.productive_core_s);
  EXPECT_DOUBLE_EQ(around.redone_core_s, whole.redone_core_s);
  EXPECT_DOUBLE_EQ(job_goodput_in(two, at_s(200), at_s(300)).allocated_core_s, 0);
}

TEST(GoodputInAWindow, ARunningAttemptCountsUpToTheWindowsEnd) {
  Attempt a = attempt(AttemptState::running, 0, 0, 40, 0, 40);
  a.ended_at.reset();
  a.first_step_at = at_s(1);  // one step a second from t=0
  const std::vector<Attempt> one = {a};
  const Goodput g = job_goodput_in(one, at_s(20), at_s(50));
  EXPECT_DOUBLE_EQ(g.allocated_core_s, 30 * 4);
  EXPECT_DOUBLE_EQ(g.productive_core_s, 30 * 4);  // steps to t=40, then a run still going
}

}  // namespace
}  // namespace trainyard::daemon
