// How an attempt ends in the JobManager: a rank lost, its ranks told to stop, and once every rank
// is accounted for, the end decided (daemon/attempt_end.h), its nodes freed or kept for those not
// heard from, the change stored and the job requeued, ended or its canary judged.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "daemon/attempt_end.h"
#include "daemon/canary.h"
#include "daemon/daemon_metrics.h"
#include "daemon/events/events.h"
#include "daemon/job_manager.h"
#include "daemon/policy/recovery.h"

namespace trainyard::daemon {

void JobManager::rank_lost(AttemptId id, int rank, const std::string& reason) {
  ActiveAttempt* attempt = attempts_.find(id);
  if (!attempt || attempt->ranks[static_cast<std::size_t>(rank)].exited) return;
  mark_rank_lost(*attempt, rank, reason);
  if (!attempt->stopping()) kill_attempt(*attempt, reason);
  maybe_finish(id);
}

void JobManager::mark_rank_lost(ActiveAttempt& attempt, int rank, const std::string& reason) {
  RankState& rs = attempt.ranks[static_cast<std::size_t>(rank)];
  rs.exited = true;
  rs.lost = true;
  rs.reason = reason;
  // The lost rank speaks for the attempt, also over a rank that failed first because this one's
  // connection closed under it, or after its node had gone quiet (recovery.h).
  const int first = attempt.first_failed_rank;
  const NodeEntry* lost_node = nodes_.find(attempt.record.nodes[static_cast<std::size_t>(rank)]);
  if (first < 0 || attempt.ranks[static_cast<std::size_t>(first)].peer_closed_rank == rank ||
      (lost_node && lost_node_went_first(lost_node->disconnected_at, lost_node->heard_at, config_.heartbeat_interval,
                                         attempt.ranks[static_cast<std::size_t>(first)].failed_at))) {
    attempt.first_failed_rank = rank;
  }
  nodes_.note_job_hit(attempt.record.nodes[static_cast<std::size_t>(rank)], attempt.record.job_id);
  spdlog::warn("event=rank_lost job={} attempt={} rank={} reason=\"{}\"", attempt.record.job_id, attempt.record.id,
               rank, reason);
}

void JobManager::kill_attempt(ActiveAttempt& attempt, const std::string& reason, StopCause cause) {
  if (attempt.stopping()) return;
  attempt.stop = AttemptStop{cause, reason};
  for (std::size_t r = 0; r < attempt.ranks.size(); ++r) {
    if (attempt.ranks[r].exited) continue;
    send_to(attempt.record.nodes[r],
            KillMsg{attempt.record.id, reason, config_.kill_grace_ms, saves_before_stop(attempt.record.job_id)});
  }
}

void JobManager::maybe_finish(AttemptId id) {
  ActiveAttempt* attempt = attempts_.find(id);
  if (attempt && (attempt->all_exited() || give_up_on_unheard_ranks(*attempt))) finish_attempt(*attempt);
}

AttemptEndFacts JobManager::attempt_end_facts(const ActiveAttempt& active) {
  AttemptEndFacts facts{{},
                        active.first_failed_rank,
                        active.stopped_for(StopCause::timed_out),
                        active.stop ? active.stop->reason : "",
                        active.stuck_ranks,
                        active.failed_checks,
                        active.newest_checkpoint_step};
  facts.unjudged_preflight = active.unjudged_preflight;
  for (const RankState& r : active.ranks) {
    facts.ranks.push_back({r.lost, r.health_failed, r.exit_code, r.signal, r.reason, r.log_tail, r.steps});
  }
  return facts;
}

void JobManager::finish_attempt(ActiveAttempt& active) {
  if (test_stuck_nodes(active)) return;  // finishes when the verdicts are in
  const TimePoint now = clock_.system_now();
  Job& job = active_jobs_.at(active.record.job_id);
  AttemptEndFacts facts = attempt_end_facts(active);
  facts.over_storage_quota = storage_.over_quota(job.id);
  facts.quota_exceeded = active.stopped_for(StopCause::quota_exceeded);
  if (active.first_failed_rank >= 0) {
    const NodeEntry* culprit = nodes_.find(active.record.nodes[static_cast<std::size_t>(active.first_failed_rank)]);
    facts.node_disk_low = culprit && culprit->low_disk;
  }
  AttemptEnd end = decide_attempt_end(active.record, job, facts,
                                      {config_.failure_rules, config_.max_infra_retries, config_.retry_backoff_base}, now);
  Attempt& attempt = active.record = std::move(end.attempt);
  job = std::move(end.job);

  const MonoTime mono_now = clock_.monotonic_now();
  std::vector<std::string> heard;
  for (std::size_t r = 0; r < active.ranks.size(); ++r) {
    const std::string& node = attempt.nodes[r];
    const NodeEntry* entry = nodes_.find(node);
    if (!active.ranks[r].unheard || !entry) {
      heard.push_back(node);
      continue;
    }
    nodes_.keep_unheard(attempt.id, node);
    unheard_.add({job.id, attempt.id, node, attempt.cores_per_node, entry->heard_at + config_.node_timeout});
  }
  nodes_.release(attempt.id, heard, attempt.cores_per_node);
  std::optional<TimePoint> stored_not_before = job.not_before;
  if (const auto until = unheard_.held_until(job.id)) {
    const Millis wait = std::max(Millis(0), std::chrono::duration_cast<Millis>(*until - mono_now));
    if (job.state == JobState::pending) {
      job.reason += "; its next attempt waits up to " + std::to_string(wait.count()) +
                    " ms for the nodes not heard from to have surely stopped it";
      // The job waits here (requeue) and may go sooner if they are heard; the store holds it the
      // whole time, so a daemon that restarts meanwhile waits too.
      stored_not_before = std::max(job.not_before.value_or(now), now + wait);
    }
  }
  attempts_.forget_survivors(job.id);
  const bool straggler_replaced =
      attempt.state == AttemptState::requeued && job.spec.replace_stragglers && !attempt.stragglers.empty();
  if (job.state == JobState::pending && (attempt.infrastructure || straggler_replaced)) {
    // Its resume need not pre-flight the nodes that kept running it (recovery.h), and may take a
    // warm spare in place of the node it left out.
    std::vector<std::string> survivors;
    for (std::size_t r = 0; r < active.ranks.size(); ++r) {
      if (std::find(job.excluded_nodes.begin(), job.excluded_nodes.end(), attempt.nodes[r]) == job.excluded_nodes.end()) {
        survivors.push_back(attempt.nodes[r]);
      }
    }
    attempts_.set_survivors(job.id, std::move(survivors));
  }
  scheduler_.finish(job.id, now);
  preempting_.erase(job.id);

  if (metrics_ && end.failure) metrics_->attempt_failed(end.failure->cls, end.failure->next, job.spec.share);
  spdlog::info("event=attempt_finished job={} attempt={} state={} class={} job_state={} reason=\"{}\"", job.id,
               attempt.id, to_string(attempt.state), attempt.failure_class, to_string(job.state), job.reason);
  store::Change change;
  change.attempts.push_back(attempt);
  change.jobs.push_back(job);
  change.jobs.back().not_before = stored_not_before;
  change.events = std::move(end.events);
  std::vector<std::string> suspects;
  if (job.user == kCanaryUser && job.state == JobState::failed) {
    // A known-good job failed: the cluster is at fault, whatever the class says.
    suspects = monitors_.suspect_canary_nodes(job, attempt, active.ranks, change);
    std::string message = "system problem: canary job " + std::to_string(job.id) + " failed on " +
                          join_node_names(attempt.nodes) + " (" + attempt.failure_class + "): " + attempt.reason;
    if (!suspects.empty()) message += "; SUSPECT until they pass a health check: " + join_node_names(suspects);
    change.events.push_back(job_event(now, "canary.failed", job, attempt.id, join_node_names(attempt.nodes), message,
                                      {{"class", attempt.failure_class}, {"reason", attempt.reason}, {"suspects", suspects}}));
    spdlog::error("event=canary_failed job={} attempt={} nodes={} class={} suspect={} reason=\"{}\"", job.id,
                  attempt.id, join_node_names(attempt.nodes), attempt.failure_class, join_node_names(suspects),
                  attempt.reason);
  }
  if (job.user == kCanaryUser && job.state == JobState::succeeded) {
    change.events.push_back(job_event(now, "canary.succeeded", job, attempt.id, join_node_names(attempt.nodes),
                                      "canary job " + std::to_string(job.id) + " succeeded on " + join_node_names(attempt.nodes),
                                      {{"steps", attempt.steps_completed}}));
  }
  const Job snapshot = job;
  networks_.release(attempt.id);
  attempts_.remove(attempt.id);  // `attempt` is gone with it
  if (is_terminal(snapshot.state)) {
    note_ended(snapshot);
    active_jobs_.erase(snapshot.id);
  }
  persist(std::move(change), [this, snapshot, suspects] {
    if (snapshot.state == JobState::pending && !resume_on_spares(snapshot.id)) requeue(snapshot);
    if (is_terminal(snapshot.state)) upstream_ended(snapshot);
    if (auto check = monitors_.canary_check(snapshot.id, suspects)) start_check(std::move(*check), nullptr);
    check_idle_stragglers("job " + job_ref_text(snapshot));
    request_schedule();
  });
}

}  // namespace trainyard::daemon
