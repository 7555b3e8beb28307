#include "daemon/policy/ended_states.h"

namespace trainyard::daemon {

void EndedStates::set(JobId id, JobState ended) {
  if (states_.empty()) first_ = id;
  if (id < first_) {  // an older job read back after a newer one: room in front
    states_.insert(states_.begin(), static_cast<std::size_t>(first_ - id), 0);
    first_ = id;
  }
  const auto at = static_cast<std::size_t>(id - first_);
  if (at >= states_.size()) states_.resize(at + 1, 0);
  states_[at] = static_cast<std::uint8_t>(1 + static_cast<int>(ended));
}

std::optional<JobState> EndedStates::find(JobId id) const {
  if (id < first_ || id - first_ >= static_cast<JobId>(states_.size())) return std::nullopt;
  const std::uint8_t stored = states_[static_cast<std::size_t>(id - first_)];
  if (stored == 0) return std::nullopt;
  return static_cast<JobState>(stored - 1);
}

}  // namespace trainyard::daemon
