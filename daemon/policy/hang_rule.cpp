#include "daemon/policy/hang_rule.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace trainyard::daemon {
namespace {

std::string seconds_text(Millis d) {
  char text[32];
  std::snprintf(text, sizeof text, "%gs", std::chrono::duration<double>(d).count());
  return text;
}

Millis p99_of(const std::deque<Millis>& intervals) {
  std::vector<Millis> sorted(intervals.begin(), intervals.end());
  // The nearest-rank p99: with 200 intervals, the second longest.
  const std::size_t rank = (sorted.size() * 99 + 99) / 100;
  const auto at = sorted.begin() + static_cast<std::ptrdiff_t>(std::min(sorted.size(), std::max<std::size_t>(rank, 1)) - 1);
  std::nth_element(sorted.begin(), at, sorted.end());
  return *at;
}

}  // namespace

PacePhase pace_phase(std::string_view reported) { return phase_kind(reported); }

std::string_view to_string(PacePhase phase) {
  switch (phase) {
    case PacePhase::step: return "step";
    case PacePhase::checkpoint: return "checkpoint";
    case PacePhase::eval: return "eval";
    case PacePhase::save: return "save";
  }
  return "step";
}

void StepPace::note_phase(std::string_view phase) {
  const PacePhase kind = pace_phase(phase);
  if (kind != PacePhase::step) slow_phase_seen_ = kind;
}

void StepPace::note_advance(MonoTime at) {
  if (last_advance_ && at > *last_advance_) {
    learn(slow_phase_seen_.value_or(PacePhase::step), std::chrono::duration_cast<Millis>(at - *last_advance_));
  }
  last_advance_ = at;
  slow_phase_seen_.reset();
}

void StepPace::learn(PacePhase phase, Millis interval) {
  Learned& learned = learned_[static_cast<std::size_t>(phase)];
  learned.intervals.push_back(interval);
  if (learned.intervals.size() > kPaceWindow) learned.intervals.pop_front();
  learned.p99 = p99_of(learned.intervals);
}

bool StepPace::learned(std::string_view phase) const {
  const PacePhase kind = pace_phase(phase);
  return learned_[static_cast<std::size_t>(kind)].intervals.size() >= (kind == PacePhase::step ? kStepsToLearn : 1);
}

Allowance StepPace::allowance(std::string_view phase) const {
  const PacePhase kind = pace_phase(phase);
  const Learned& learned = learned_[static_cast<std::size_t>(kind)];
  const std::string name = intervals_of_.empty() ? std::string(to_string(kind)) : intervals_of_;
  if (!this->learned(phase)) {
    return {kUnlearnedAllowance, "not yet learned (" + std::to_string(learned.intervals.size()) + " " + name +
                                     " intervals seen): " + seconds_text(kUnlearnedAllowance)};
  }
  const Millis learned_limit = learned.p99 * kHangIntervalMultiple;
  return {std::max(learned_limit, kHangFloor), "learned: " + std::to_string(kHangIntervalMultiple) + " x its p99 " + name +
                                                   " interval of " + seconds_text(learned.p99) + ", at least " +
                                                   seconds_text(kHangFloor)};
}

Allowance explicit_allowance(std::int64_t stuck_after_s) {
  return {std::chrono::seconds(stuck_after_s), "the job's stuck_after_s"};
}

}  // namespace trainyard::daemon
