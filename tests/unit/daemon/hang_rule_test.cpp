#include "daemon/policy/hang_rule.h"

#include <gtest/gtest.h>

namespace trainyard::daemon {
namespace {

using namespace std::chrono_literals;

// Feeds `pace` advances every `interval`, starting at `at`, reporting `phase`; returns the time of the last.
MonoTime steps(StepPace& pace, MonoTime at, int count, Millis interval, const std::string& phase = "forward") {
  for (int i = 0; i < count; ++i) {
    at += interval;
    pace.note_phase(phase);
    pace.note_advance(at);
  }
  return at;
}

TEST(HangRule, PhasesThatTakeLongAreLearnedApart) {
  EXPECT_EQ(pace_phase("forward"), PacePhase::step);
  EXPECT_EQ(pace_phase("all-reduce"), PacePhase::step);
  EXPECT_EQ(pace_phase(""), PacePhase::step);
  EXPECT_EQ(pace_phase("checkpoint"), PacePhase::checkpoint);
  EXPECT_EQ(pace_phase("CKPT-write"), PacePhase::checkpoint);
  EXPECT_EQ(pace_phase("eval"), PacePhase::eval);
  EXPECT_EQ(pace_phase("validation"), PacePhase::eval);
  EXPECT_EQ(pace_phase("save_model"), PacePhase::save);
}

TEST(HangRule, BeforeAnythingIsLearnedTheAllowanceIsTenMinutes) {
  StepPace pace;
  EXPECT_EQ(pace.allowance("forward").limit, 600s);
  // A long first step (compiling, loading data) teaches nothing: it is not a step.
  MonoTime t{};
  pace.note_advance(t + 400s);
  EXPECT_EQ(pace.allowance("forward").limit, 600s);
  steps(pace, t + 400s, static_cast<int>(kStepsToLearn) - 1, 200ms);
  EXPECT_EQ(pace.allowance("forward").limit, 600s) << "too few steps to judge by";
}

TEST(HangRule, FastStepsGetTheThirtySecondFloor) {
  StepPace pace;
  MonoTime t{};
  pace.note_advance(t);
  steps(pace, t, 100, 200ms);
  const Allowance a = pace.allowance("forward");
  EXPECT_EQ(a.limit, 30s);
  EXPECT_EQ(a.basis, "learned: 5 x its p99 step interval of 0.2s, at least 30s");
}

TEST(HangRule, SlowStepsGetFiveTimesTheirP99) {
  StepPace pace;
  MonoTime t{};
  pace.note_advance(t);
  t = steps(pace, t, 60, 10s);
  EXPECT_EQ(pace.allowance("forward").limit, 50s);
}

TEST(HangRule, AnOccasionalSlowStepStaysInTheP99) {
  // Every 50th step is 10x slower (a periodic log flush): 8 of the 200 intervals kept.
  StepPace pace;
  MonoTime t{};
  pace.note_advance(t);
  for (int block = 0; block < 8; ++block) {
    t = steps(pace, t, 49, 1s);
    t = steps(pace, t, 1, 10s);
  }
  EXPECT_EQ(pace.allowance("forward").limit, 50s);
}

TEST(HangRule, ACheckpointPhaseGetsItsOwnAllowanceFirstGenerousThenLearned) {
  StepPace pace;
  MonoTime t{};
  pace.note_advance(t);
  t = steps(pace, t, 50, 200ms);
  EXPECT_EQ(pace.allowance("checkpoint").limit, 600s) << "its first occurrence";
  // A 90 s checkpoint: reported as such, then the step advances.
  pace.note_phase("checkpoint");
  t += 90s;
  pace.note_advance(t);
  EXPECT_EQ(pace.allowance("checkpoint").limit, 450s);
  EXPECT_EQ(pace.allowance("forward").limit, 30s) << "ordinary steps did not learn the checkpoint's interval";
}

TEST(HangRule, OnlyTheRecentWindowCounts) {
  StepPace pace;
  MonoTime t{};
  pace.note_advance(t);
  t = steps(pace, t, 10, 60s);
  EXPECT_EQ(pace.allowance("forward").limit, 300s);
  t = steps(pace, t, static_cast<int>(kPaceWindow), 1s);
  EXPECT_EQ(pace.allowance("forward").limit, 30s) << "the slow start fell out of the window";
}

TEST(HangRule, AnExplicitStuckAfterIsTheAllowance) {
  const Allowance a = explicit_allowance(5);
  EXPECT_EQ(a.limit, 5s);
  EXPECT_EQ(a.basis, "the job's stuck_after_s");
}

}  // namespace
}  // namespace trainyard::daemon
