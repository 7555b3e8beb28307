#include "daemon/unheard_stops.h"

#include <algorithm>
#include <limits>

namespace trainyard::daemon {

void UnheardStops::add(Stop stop) {
  auto key = std::make_pair(stop.node, stop.attempt);
  stops_.insert_or_assign(std::move(key), std::move(stop));
}

std::optional<UnheardStops::Stop> UnheardStops::heard_stopped(const std::string& node, AttemptId attempt) {
  auto it = stops_.find({node, attempt});
  if (it == stops_.end()) return std::nullopt;
  Stop stop = std::move(it->second);
  stops_.erase(it);
  return stop;
}

std::vector<AttemptId> UnheardStops::attempts_on(const std::string& node) const {
  std::vector<AttemptId> attempts;
  for (auto it = stops_.lower_bound({node, std::numeric_limits<AttemptId>::min()});
       it != stops_.end() && it->first.first == node; ++it) {
    attempts.push_back(it->first.second);
  }
  return attempts;
}

bool UnheardStops::holds(JobId job) const { return held_until(job).has_value(); }

std::optional<MonoTime> UnheardStops::held_until(JobId job) const {
  std::optional<MonoTime> until;
  for (const auto& [key, stop] : stops_) {
    if (stop.job == job) until = std::max(until.value_or(stop.surely_stopped_at), stop.surely_stopped_at);
  }
  return until;
}

}  // namespace trainyard::daemon
