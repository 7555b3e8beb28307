// The job manager's liveness side (docs/DESIGN.md "Liveness and stuck attempts"): the
// periodic tick, nodes that stop heartbeating, attempts past their timeout, and attempts that
// stopped making progress.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "daemon/canary.h"
#include "daemon/events/events.h"
#include "daemon/job_manager.h"

namespace trainyard::daemon {

void JobManager::mark_node_down(const std::string& node, const std::string& reason) {
  spdlog::warn("event=node_down node={} reason=\"{}\"", node, reason);
  const NodeEntry& entry = *nodes_.find(node);
  std::set<JobId> hit = entry.jobs_hit;
  for (AttemptId id : entry.attempts) {
    if (const ActiveAttempt* attempt = attempts_.find(id)) hit.insert(attempt->record.job_id);
  }
  store::Change down = nodes_.mark_down(node, reason);
  name_jobs_hit(down.events.back(), hit);
  persist(std::move(down), nullptr);
  const std::set<AttemptId>& held = nodes_.find(node)->attempts;
  const std::vector<AttemptId> attempts(held.begin(), held.end());  // each lost rank may finish its attempt
  for (AttemptId id : attempts) {
    const ActiveAttempt* attempt = attempts_.find(id);
    if (attempt) rank_lost(id, attempt->rank_of(node), "node_lost: node " + node + " " + reason);
  }
  // Whatever it still ran of ended attempts is surely stopped by now (fence_timing.h).
  for (AttemptId id : unheard_.attempts_on(node)) heard_stopped(node, id);
}

void JobManager::name_jobs_hit(store::Event& event, const std::set<JobId>& jobs) const {
  if (jobs.empty()) return;
  Json refs = Json::array();
  std::string names;
  for (JobId id : jobs) {
    const auto active = active_jobs_.find(id);
    const std::string ref = active == active_jobs_.end() ? std::to_string(id) : job_ref_text(active->second);
    refs.push_back(ref);
    names += (names.empty() ? "job " : ", job ") + ref;
    if (active != active_jobs_.end()) names += " (" + active->second.spec.name + ")";
  }
  event.details["jobs"] = std::move(refs);
  event.message += "; it was running " + names;
}

void JobManager::check_stuck(ActiveAttempt& attempt, MonoTime now) {
  if (attempt.stopping() || attempt.record.state != AttemptState::running) return;
  const Job& job = active_jobs_.at(attempt.record.job_id);
  const auto diagnosis = Monitors::stuck(job, attempt.record, attempt.ranks, now);
  if (!diagnosis) return;
  attempt.stuck_ranks = diagnosis->culprits;
  attempt.record.diagnosis = diagnosis->text;
  attempt.record.stuck_detected_at = clock_.system_now();
  spdlog::warn("event=attempt_stuck job={} attempt={} diagnosis=\"{}\"", job.id, attempt.record.id, diagnosis->text);
  store::Change change;
  change.attempts.push_back(attempt.record);
  change.events.push_back(job_event(*attempt.record.stuck_detected_at, "job.stuck", job, attempt.record.id, join_node_names(attempt.record.nodes),
                                    "job " + job_ref_text(job) + " is stuck and is being stopped: " + diagnosis->text,
                                    {{"diagnosis", diagnosis->text}, {"ranks", diagnosis->culprits}}));
  persist(std::move(change), nullptr);
  kill_attempt(attempt, "stuck: " + diagnosis->text);
}

void JobManager::watch_for_stragglers(ActiveAttempt& attempt, int rank, const AttemptReport& report) {
  if (attempt.stopping() || attempt.record.state != AttemptState::running) return;
  // A simulated rank's device time; a command rank's wall time, read off when its step last advanced.
  std::optional<Millis> work;
  if (report.busy_ms) {
    work = Millis(*report.busy_ms);
  } else if (report.last_progress_at) {
    work = std::chrono::duration_cast<Millis>(report.last_progress_at->time_since_epoch());
  }
  if (!work) return;
  const bool slow_phase = pace_phase(report.phase) != PacePhase::step;
  if (const auto ratio = attempt.stragglers.observe(static_cast<std::size_t>(rank), report.step, *work, slow_phase)) {
    straggler_found(attempt, rank, *ratio);
  }
}

void JobManager::straggler_found(ActiveAttempt& attempt, int rank, double ratio) {
  Job& job = active_jobs_.at(attempt.record.job_id);
  const std::string& node = attempt.record.nodes[static_cast<std::size_t>(rank)];
  const TimePoint now = clock_.system_now();
  attempt.record.stragglers.push_back(Straggler{rank, node, ratio, now});
  const std::string ratio_text = fmt::format("{:.1f}x", ratio);
  const std::string found = "rank " + std::to_string(rank) + " on " + node + " takes " + ratio_text +
                            " the median time per step of the other ranks";
  const bool replace = job.spec.replace_stragglers && !job.cancel_requested && job.stopping_to == StopIntent::none;
  spdlog::warn("event=straggler job={} attempt={} rank={} node={} ratio={:.2f} replace={}", job.id, attempt.record.id,
               rank, node, ratio, replace);
  store::Change change;
  change.attempts.push_back(attempt.record);
  change.events.push_back(job_event(now, "job.straggler", job, attempt.record.id, node,
                                    "job " + job_ref_text(job) + ": " + found +
                                        (replace ? "; it is checkpointed and queued again without " + node : "") +
                                        "; " + node + " is health-checked once no attempt runs on it",
                                    {{"rank", rank}, {"ratio", ratio}, {"replace", replace}}));
  // The node stays in service until its own check says it is slow: a job's report alone must not
  // idle the node's other cores. The suite needs the node to itself, so it waits for its attempts.
  stragglers_to_check_.insert(node);
  if (!replace) return persist(std::move(change), nullptr);
  if (std::find(job.excluded_nodes.begin(), job.excluded_nodes.end(), node) == job.excluded_nodes.end()) {
    job.excluded_nodes.push_back(node);
  }
  stop_to_queue_again(job, StopIntent::requeue, "straggler: " + found + "; queued again without " + node,
                      std::move(change), nullptr);
}

void JobManager::check_idle_stragglers(const std::string& by) {
  std::vector<std::string> idle;
  for (auto it = stragglers_to_check_.begin(); it != stragglers_to_check_.end();) {
    const NodeEntry* entry = nodes_.find(*it);
    const bool in_service = entry && entry->channel &&
                            (entry->node.state == NodeState::healthy || entry->node.state == NodeState::suspect);
    if (!in_service) {  // gone, or already out of service: its next check comes with its return
      it = stragglers_to_check_.erase(it);
      continue;
    }
    const bool busy = nodes_.under_test(*it) || std::any_of(attempts_.all().begin(), attempts_.all().end(), [&](const auto& a) {
      const std::vector<std::string>& nodes = a.second.record.nodes;
      return std::find(nodes.begin(), nodes.end(), *it) != nodes.end();
    });
    if (busy) {
      ++it;
      continue;
    }
    idle.push_back(*it);
    it = stragglers_to_check_.erase(it);
  }
  if (!idle.empty()) start_check({HealthCheckKind::after_straggler, idle, true, false, by}, nullptr);
}

void JobManager::excuse_own_pause(MonoTime now, Millis paused) {
  spdlog::warn("event=daemon_was_paused paused_ms={} nodes={} attempts={}", paused.count(), nodes_.size(),
               attempts_.size());
  nodes_.excuse_silence(now, paused);
  const auto later = [&](MonoTime at) { return std::min(at + paused, now); };
  for (auto& [id, attempt] : attempts_.all()) {
    for (RankState& rank : attempt.ranks) {
      rank.progress_at = later(rank.progress_at);
      if (rank.unconfirmed_since) rank.unconfirmed_since = later(*rank.unconfirmed_since);
    }
  }
}

void JobManager::tick() {
  const MonoTime now = clock_.monotonic_now();
  if (const Millis paused = own_pauses_.observe(now); paused > Millis(0)) excuse_own_pause(now, paused);
  pending_.retry_due();
  if (accepted_since_tick_ > 0) {
    spdlog::info("event=jobs_submitted count={} newest_job={}", std::exchange(accepted_since_tick_, 0), max_job_id_);
  }
  for (const auto& [name, silent] : nodes_.silent_nodes(now, config_.node_timeout)) {
    mark_node_down(name, "sent no heartbeat for " + std::to_string(silent.count()) + " ms");
  }
  std::vector<std::pair<AttemptId, int>> unconfirmed;
  std::vector<AttemptId> stopping;
  for (auto& [id, attempt] : attempts_.all()) {
    const Job& job = active_jobs_.at(attempt.record.job_id);
    if (job.spec.timeout_s && attempt.record.started_at && !attempt.stopping() &&
        now - attempt.running_since > std::chrono::seconds(*job.spec.timeout_s)) {
      kill_attempt(attempt, "timeout: ran longer than timeout_s=" + std::to_string(*job.spec.timeout_s), StopCause::timed_out);
    }
    check_stuck(attempt, now);
    enforce_storage_quota(attempt, now);
    for (std::size_t r = 0; r < attempt.ranks.size(); ++r) {
      const auto& since = attempt.ranks[r].unconfirmed_since;
      if (since && !attempt.ranks[r].exited && now - *since > unanswered_after() &&
          nodes_.connected(attempt.record.nodes[r])) {
        unconfirmed.emplace_back(id, static_cast<int>(r));
      }
    }
    if (attempt.stopping() && !attempt.all_exited()) stopping.push_back(id);
  }
  for (const auto& [id, rank] : unconfirmed) {
    rank_lost(id, rank, "node_lost: the agent no longer runs this attempt (restarted?)");
  }
  for (AttemptId id : stopping) {
    ActiveAttempt* attempt = attempts_.find(id);
    if (attempt && give_up_on_unheard_ranks(*attempt)) finish_attempt(*attempt);
  }
  // Jobs that fit start before a periodic check takes idle nodes; one that waits for nodes holds
  // periodic checks back (monitors.h).
  if (schedule_requested_) schedule();
  Monitors::Due due = monitors_.tick(now, [this] { return canary_running(); }, queue_waits_for_nodes_);
  for (HealthCheckRequest& check : due.periodic_checks) start_check(std::move(check), nullptr);
  if (due.canary) submit_canary(std::move(*due.canary));
  keep_spares_warm();
  request_schedule();
}

}  // namespace trainyard::daemon
