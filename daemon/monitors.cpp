#include "daemon/monitors.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "daemon/canary.h"

namespace trainyard::daemon {

Monitors::Monitors(MonitorConfig config, NodeRegistry& nodes, MonoTime now)
    : config_(config),
      nodes_(nodes),
      started_(now),
      next_periodic_check_(now + config.periodic_check_interval),
      next_canary_(now + config.canary_interval) {}

Monitors::Due Monitors::tick(MonoTime now, const std::function<bool()>& canary_running) {
  Due due;
  if (config_.periodic_check_interval.count() > 0 && (now >= next_periodic_check_ || first_comparison_due(now))) {
    next_periodic_check_ = now + config_.periodic_check_interval;
    due.periodic_check = periodic_check();
    if (due.periodic_check && due.periodic_check->nodes.size() >= kPairTestNodes) compared_ = true;
  }
  if (config_.canary_interval.count() > 0 && now >= next_canary_) {
    next_canary_ = now + config_.canary_interval;
    due.canary = canary(canary_running());
  }
  return due;
}

Result<JobSpec> Monitors::canary_now(MonoTime now, bool canary_running) {
  if (canary_running) return Error::conflict("a canary job is running already; it ends within a minute");
  std::optional<JobSpec> spec = canary(false);
  if (!spec) return Error::conflict("no node is ready to run a canary: none is connected and accepting work");
  if (config_.canary_interval.count() > 0) next_canary_ = now + config_.canary_interval;
  return std::move(*spec);
}

std::optional<MonoTime> Monitors::next_canary() const {
  if (config_.canary_interval.count() == 0) return std::nullopt;
  return next_canary_;
}

bool Monitors::first_comparison_due(MonoTime now) const {
  if (compared_ || config_.first_comparison_after.count() == 0 || now < started_ + config_.first_comparison_after) {
    return false;
  }
  const std::optional<HealthCheckRequest> check = periodic_check();
  return check && check->nodes.size() >= kPairTestNodes;
}

std::optional<HealthCheckRequest> Monitors::periodic_check() const {
  std::vector<std::string> idle;
  for (const auto& [name, entry] : nodes_.entries()) {
    const NodeState state = entry.node.state;
    if (!entry.channel || state == NodeState::drained || state == NodeState::down || !entry.attempts.empty() ||
        nodes_.under_test(name)) {
      continue;
    }
    idle.push_back(name);
  }
  if (idle.empty()) return std::nullopt;
  const bool collective = idle.size() >= 2;
  return HealthCheckRequest{HealthCheckKind::periodic, std::move(idle), true, collective, "daemon"};
}

std::optional<JobSpec> Monitors::canary(bool canary_running) const {
  const auto ready = std::count_if(nodes_.entries().begin(), nodes_.entries().end(), [](const auto& kv) {
    return kv.second.channel && accepts_work(kv.second.node.state);
  });
  if (canary_running || ready == 0) {
    spdlog::info("event=canary_skipped running={} ready_nodes={}", canary_running, ready);
    return std::nullopt;
  }
  return canary_spec(static_cast<int>(std::min<std::int64_t>(config_.canary_nodes, ready)));
}

std::optional<StuckDiagnosis> Monitors::stuck(const Job& job, const Attempt& attempt, const std::vector<RankState>& ranks,
                                              MonoTime now) {
  // The kernel always reports steps; a command job opts in by reporting one (its progress file).
  const bool reports_progress = job.spec.kind == JobKind::simulated ||
                                std::any_of(ranks.begin(), ranks.end(), [](const RankState& r) { return r.progress_step > 0; });
  if (!reports_progress) return std::nullopt;
  std::vector<RankProgress> progress;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankState& rank = ranks[r];
    if (rank.exited) continue;
    if (job.spec.kind == JobKind::command && rank.progress_step == 0) continue;
    progress.push_back(RankProgress{static_cast<int>(r), attempt.nodes[r], rank.progress_step, rank.phase,
                                    std::chrono::duration_cast<Millis>(now - rank.progress_at),
                                    job.spec.stuck_after_s ? explicit_allowance(*job.spec.stuck_after_s)
                                                           : rank.pace.allowance(rank.phase)});
  }
  return diagnose_stuck(progress);
}

std::optional<HealthCheckRequest> Monitors::stuck_nodes_check(const Job& job, const Attempt& attempt,
                                                              const std::vector<int>& stuck_ranks) const {
  std::vector<std::string> nodes;
  for (int r : stuck_ranks) {
    const std::string& node = attempt.nodes[static_cast<std::size_t>(r)];
    // A node that is gone is lost, not tested; one already under test gets its verdict there.
    if (!nodes_.connected(node) || nodes_.under_test(node)) continue;
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
  }
  if (nodes.empty()) return std::nullopt;
  const bool collective = nodes.size() >= 2;
  return HealthCheckRequest{HealthCheckKind::after_stuck, std::move(nodes), true, collective, "job " + job_ref_text(job)};
}

std::vector<std::string> Monitors::suspect_canary_nodes(const Job& canary, const Attempt& attempt,
                                                        const std::vector<RankState>& ranks, store::Change& change) {
  // Nodes already out of service keep their state and its way back.
  const bool lost = std::any_of(ranks.begin(), ranks.end(), [](const RankState& r) { return r.lost; });
  const std::string reason = "canary job " + std::to_string(canary.id) + " failed on it (" + attempt.failure_class +
                             "); returns to service after passing its health check";
  std::vector<std::string> suspects;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (lost && !ranks[r].lost) continue;
    const std::string& name = attempt.nodes[r];
    const NodeEntry* entry = nodes_.find(name);
    if (!entry || !entry->channel || entry->node.state != NodeState::healthy) continue;
    nodes_.mark_suspect(name, reason, {{"canary_job", canary.id}}, change);
    spdlog::warn("event=node_state node={} state=SUSPECT canary={} reason=\"{}\"", name, canary.id, reason);
    suspects.push_back(name);
  }
  return suspects;
}

std::optional<HealthCheckRequest> Monitors::canary_check(JobId canary, const std::vector<std::string>& suspects) const {
  std::vector<std::string> to_test;
  for (const auto& node : suspects) {
    // One already under test gets its verdict there.
    if (nodes_.contains(node) && !nodes_.under_test(node)) to_test.push_back(node);
  }
  if (to_test.empty()) return std::nullopt;
  const bool collective = to_test.size() >= 2;
  return HealthCheckRequest{HealthCheckKind::after_canary, std::move(to_test), true, collective,
                            "canary job " + std::to_string(canary)};
}

}  // namespace trainyard::daemon
