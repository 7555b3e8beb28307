#include "daemon/policy/recovery.h"

#include <algorithm>

namespace trainyard::daemon {
namespace {

bool checked_within(const std::optional<TimePoint>& passed_at, TimePoint now, Millis age) {
  return passed_at && now - *passed_at <= age;
}

}  // namespace

NodeLoss node_loss(const NodeLossSignals& signals, MonoTime now, const RecoveryConfig& config) {
  if (!signals.disconnected_at) return NodeLoss::none;
  const Millis since = std::chrono::duration_cast<Millis>(now - *signals.disconnected_at);
  if (!signals.stopped_by_keeper && since < config.stopped_within) return NodeLoss::none;
  if (signals.peer_saw_close) return NodeLoss::peer_saw_close;
  return since >= config.disconnect_grace ? NodeLoss::grace_over : NodeLoss::none;
}

bool lost_node_went_first(std::optional<MonoTime> disconnected_at, MonoTime heard_at, Millis heartbeat_interval,
                          std::optional<MonoTime> first_failure_heard_at) {
  if (!first_failure_heard_at) return true;
  const MonoTime quiet_since = disconnected_at ? std::min(*disconnected_at, heard_at + heartbeat_interval)
                                               : heard_at + heartbeat_interval;
  return quiet_since <= *first_failure_heard_at;
}

Millis stopped_within_after(Millis kill_grace) { return kill_grace + std::max(Millis(250), kill_grace / 4); }

std::vector<std::string> unproven_nodes(const std::vector<ResumeNode>& nodes, TimePoint now, Millis warm_for) {
  std::vector<std::string> unproven;
  for (const ResumeNode& node : nodes) {
    if (!node.survivor && !checked_within(node.passed_check_at, now, warm_for)) unproven.push_back(node.name);
  }
  return unproven;
}

std::optional<std::vector<std::string>> resume_nodes(const std::vector<std::string>& survivors,
                                                     const std::vector<std::string>& spares, int needed,
                                                     const std::function<bool(const std::string&)>& usable) {
  std::vector<std::string> chosen;
  for (const auto* names : {&survivors, &spares}) {
    for (const std::string& name : *names) {
      if (static_cast<int>(chosen.size()) == needed) return chosen;
      if (std::find(chosen.begin(), chosen.end(), name) == chosen.end() && usable(name)) chosen.push_back(name);
    }
  }
  if (static_cast<int>(chosen.size()) < needed) return std::nullopt;
  return chosen;
}

SparePlan plan_warm_spares(std::vector<SpareCandidate> candidates, int count, TimePoint now, Millis warm_for) {
  // Only the first `count` need an order: a whole fleet is idle while it joins.
  const std::size_t kept = std::min(candidates.size(), static_cast<std::size_t>(std::max(count, 0)));
  const auto kept_end = candidates.begin() + static_cast<std::ptrdiff_t>(kept);
  std::partial_sort(candidates.begin(), kept_end, candidates.end(), [](const SpareCandidate& a, const SpareCandidate& b) {
    if (a.passed_check_at != b.passed_check_at) return a.passed_check_at > b.passed_check_at;  // nullopt is oldest
    return a.name < b.name;
  });
  SparePlan plan;
  for (auto it = candidates.begin(); it != kept_end; ++it) {
    plan.spares.emplace_back(it->name);
    if (!it->under_test && !checked_within(it->passed_check_at, now, warm_for / 2)) plan.to_test.emplace_back(it->name);
  }
  return plan;
}

}  // namespace trainyard::daemon
