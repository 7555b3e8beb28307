// The job manager's liveness side (DESIGN.md "Liveness, stuck jobs, canaries, goodput"): the
// periodic tick, nodes that stop heartbeating, attempts past their timeout, and attempts that
// stopped making progress.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "daemon/events.h"
#include "daemon/job_manager.h"
#include "daemon/stuck_diagnosis.h"

namespace trainyard {

void JobManager::mark_node_down(NodeEntry& entry, const std::string& reason) {
  const TimePoint now = clock_.system_now();
  entry.node.state = NodeState::down;
  entry.node.state_reason = reason;
  entry.node.state_since = now;
  entry.node.connected = false;
  if (entry.channel) {
    entry.channel->disconnect(reason);
    entry.channel.reset();
  }
  sync_node(entry);
  Change change;
  change.nodes.push_back(entry.node);
  change.events.push_back(node_state_event(now, NodeState::down, entry.node.name, reason));
  spdlog::warn("event=node_down node={} reason=\"{}\"", entry.node.name, reason);
  persist(std::move(change), nullptr);
  const std::vector<AttemptId> attempts(entry.attempts.begin(), entry.attempts.end());
  for (AttemptId id : attempts) {
    auto it = attempts_.find(id);
    if (it == attempts_.end()) continue;
    rank_lost(id, rank_of(it->second, entry.node.name), "node_lost: node " + entry.node.name + " " + reason);
  }
}

void JobManager::check_stuck(ActiveAttempt& attempt, MonoTime now) {
  if (attempt.killing || attempt.record.state != AttemptState::running) return;
  const Job& job = active_jobs_.at(attempt.record.job_id);
  // The kernel always reports steps; a command job opts in by reporting one (its progress file).
  const bool reports_progress =
      job.spec.kind == JobKind::simulated ||
      std::any_of(attempt.ranks.begin(), attempt.ranks.end(), [](const RankState& r) { return r.progress_step > 0; });
  if (!reports_progress) return;
  std::vector<RankProgress> progress;
  for (std::size_t r = 0; r < attempt.ranks.size(); ++r) {
    const RankState& rank = attempt.ranks[r];
    if (rank.exited) continue;
    progress.push_back(RankProgress{static_cast<int>(r), attempt.record.nodes[r], rank.progress_step, rank.phase,
                                    std::chrono::duration_cast<Millis>(now - rank.progress_at)});
  }
  const auto diagnosis = diagnose_stuck(progress, std::chrono::seconds(job.spec.stuck_after_s));
  if (!diagnosis) return;
  attempt.stuck_ranks = diagnosis->culprits;
  attempt.record.diagnosis = diagnosis->text;
  attempt.record.stuck_detected_at = clock_.system_now();
  spdlog::warn("event=attempt_stuck job={} attempt={} diagnosis=\"{}\"", job.id, attempt.record.id, diagnosis->text);
  Change change;
  change.attempts.push_back(attempt.record);
  change.events.push_back(job_event(*attempt.record.stuck_detected_at, "job.stuck", job, attempt.record.id, join_node_names(attempt.record.nodes),
                                    "job " + std::to_string(job.id) + " is stuck and is being stopped: " + diagnosis->text,
                                    {{"diagnosis", diagnosis->text}, {"ranks", diagnosis->culprits}}));
  persist(std::move(change), nullptr);
  kill_attempt(attempt, "stuck: " + diagnosis->text);
}

void JobManager::tick() {
  const MonoTime now = clock_.monotonic_now();
  if (accepted_since_tick_ > 0) {
    spdlog::info("event=jobs_submitted count={} newest_job={}", std::exchange(accepted_since_tick_, 0), max_job_id_);
  }
  for (auto& [name, entry] : nodes_) {
    if (entry.node.state == NodeState::down || !entry.node.last_heartbeat) continue;
    const auto silent = now - entry.heard_at;
    if (silent > config_.node_timeout) {
      mark_node_down(entry, "sent no heartbeat for " + std::to_string(silent.count()) + " ms");
    }
  }
  std::vector<std::pair<AttemptId, int>> unconfirmed;
  for (auto& [id, attempt] : attempts_) {
    const Job& job = active_jobs_.at(attempt.record.job_id);
    if (job.spec.timeout_s && attempt.record.started_at && !attempt.killing &&
        now - attempt.running_since > std::chrono::seconds(*job.spec.timeout_s)) {
      attempt.timed_out = true;
      kill_attempt(attempt, "timeout: ran longer than timeout_s=" + std::to_string(*job.spec.timeout_s));
    }
    check_stuck(attempt, now);
    for (std::size_t r = 0; r < attempt.ranks.size(); ++r) {
      const auto& since = attempt.ranks[r].unconfirmed_since;
      if (since && !attempt.ranks[r].exited && now - *since > 2 * config_.heartbeat_interval &&
          nodes_[attempt.record.nodes[r]].channel) {
        unconfirmed.emplace_back(id, static_cast<int>(r));
      }
    }
  }
  for (const auto& [id, rank] : unconfirmed) {
    rank_lost(id, rank, "node_lost: the agent no longer runs this attempt (restarted?)");
  }
  if (config_.periodic_check_interval.count() > 0 && now >= next_periodic_check_) {
    next_periodic_check_ = now + config_.periodic_check_interval;
    start_periodic_check();
  }
  if (config_.canary_interval.count() > 0 && now >= next_canary_) {
    next_canary_ = now + config_.canary_interval;
    start_canary();
  }
  request_schedule();
}

}  // namespace trainyard
