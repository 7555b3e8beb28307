#pragma once
// The hang rule: how long one rank may go without advancing its step before it is stuck, learned
// from that rank's own pace so that no job needs tuning. Pure: observations in, allowance out; no
// clock is read.
//   - The allowance is max(5 x the p99 of the rank's recent step intervals, 30 s).
//   - An interval during which the rank reported a slow phase (a checkpoint, an eval, a save) is
//     learned apart, for that phase: while a rank is in such a phase, that phase's allowance applies.
//   - Until something is learned (before the first steps: compiling, loading data; a slow phase's
//     first occurrence) the allowance is a generous 10 minutes.
//   - A job's explicit `stuck_after_s` replaces all of this (JobSpec::stuck_after_s).
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "proto/phase_names.h"
#include "proto/time.h"

namespace trainyard::daemon {

inline constexpr Millis kHangFloor{30'000};
inline constexpr Millis kUnlearnedAllowance{600'000};
inline constexpr int kHangIntervalMultiple = 5;
// Intervals kept per phase: enough that a slow step every 50 stays in the p99.
inline constexpr std::size_t kPaceWindow = 200;
// Ordinary steps learned before the learned allowance replaces the unlearned one.
inline constexpr std::size_t kStepsToLearn = 5;

// The phases whose intervals are learned apart from ordinary steps (proto/phase_names.h).
using PacePhase = PhaseKind;
inline constexpr std::size_t kPacePhases = 4;

// What a reported phase name counts as: "checkpoint", "ckpt-write", "eval", "validation", "save"...
// are slow phases; everything else ("forward", "all-reduce", "", ...) is an ordinary step.
PacePhase pace_phase(std::string_view reported);
std::string_view to_string(PacePhase phase);

struct Allowance {
  Millis limit{0};
  std::string basis;  // how it was found: "learned: 5 x p99 step interval 0.2s, at least 30s"
};

class StepPace {
 public:
  StepPace() = default;
  // `intervals_of` names what advances in the allowance's basis ("output"), instead of the phase.
  explicit StepPace(std::string_view intervals_of) : intervals_of_(intervals_of) {}
  // A report of the rank in `phase`, whether or not its step advanced.
  void note_phase(std::string_view phase);
  // Its step advanced at `at`: the interval since the previous advance is learned, for the slow
  // phase seen in between, if any, else as an ordinary step. The first advance teaches nothing
  // (what came before it was startup, not a step).
  void note_advance(MonoTime at);

  // How long the rank, last reported in `phase`, may stay without advancing.
  Allowance allowance(std::string_view phase) const;
  // Whether that allowance is learned (else it is the unlearned 10 minutes).
  bool learned(std::string_view phase) const;

 private:
  struct Learned {
    std::deque<Millis> intervals;  // the latest kPaceWindow, oldest first
    Millis p99{0};                 // of `intervals`, kept as they change
  };
  void learn(PacePhase phase, Millis interval);

  std::string intervals_of_;
  std::array<Learned, kPacePhases> learned_{};
  std::optional<MonoTime> last_advance_;
  std::optional<PacePhase> slow_phase_seen_;  // since the last advance
};

// A fixed allowance: the job's stuck_after_s.
Allowance explicit_allowance(std::int64_t stuck_after_s);

}  // namespace trainyard::daemon
