// The job manager's agent side: registration and reconciliation, and what agents report about
// their attempts (started, heartbeat progress, exited). The state machine it drives is in
// job_manager.cpp.
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "daemon/base/quoted_output.h"
#include "daemon/daemon_metrics.h"
#include "daemon/events/events.h"
#include "daemon/job_changes.h"
#include "daemon/job_manager.h"
#include "daemon/policy/lifecycle.h"

namespace trainyard::daemon {

// ---- agent side --------------------------------------------------------------------------------

namespace {

Result<void> check_protocol(int protocol) {
  if (protocol == kProtocolVersion) return {};
  return Error::invalid_input("protocol", "protocol version " + std::to_string(protocol) +
                                              " is not supported; this daemon speaks version " +
                                              std::to_string(kProtocolVersion));
}

}  // namespace

Result<void> JobManager::agent_hello(const HelloMsg& hello, std::shared_ptr<AgentChannel> channel,
                                     const std::string& node_credential) {
  if (Result<void> spoken = check_protocol(hello.protocol); !spoken) return spoken;
  // A node proves itself before it takes work: when it runs none of the attempts we gave it (a new
  // node, a restarted agent, a hello listing attempts we never assigned it), it is tested first;
  // one that kept ours running (across a reconnect or our restart) keeps its state, since the
  // accelerator suite cannot test cores in use. Attempts it lists that are not ours are fenced
  // below and count for nothing.
  const auto runs_ours = [&](const AttemptReport& report) {
    const auto on = attempts_.rank_on(report.attempt_id, hello.name);
    return on && !on->attempt->ranks[static_cast<std::size_t>(on->rank)].exited;
  };
  const bool runs_our_attempts = std::any_of(hello.attempts.begin(), hello.attempts.end(), runs_ours);
  NodeRegistry::Registration registration =
      nodes_.register_agent(hello, std::move(channel), config_.registration_checks && !runs_our_attempts);
  WelcomeMsg welcome{config_.daemon_version, static_cast<int>(config_.heartbeat_interval.count()), node_credential};
  welcome.fence_after_ms = static_cast<int>(config_.fence_after.count());
  welcome.cluster = config_.cluster_name;
  send_to(hello.name, welcome);

  // Reconcile: what the agent runs against what we think it runs.
  std::set<AttemptId> reported;
  for (const auto& report : hello.attempts) {
    reported.insert(report.attempt_id);
    if (!runs_ours(report)) {
      fence(hello.name, report.attempt_id, "attempt is not one this node runs");
      continue;
    }
    const auto on = attempts_.rank_on(report.attempt_id, hello.name);
    RankState& rs = on->attempt->ranks[static_cast<std::size_t>(on->rank)];
    rs.unconfirmed_since.reset();
    rs.steps = std::max(rs.steps, report.step);
    // A rank the agent still runs has started, even if its start was lost with a restart of ours.
    on_started(hello.name, AttemptStartedMsg{report.attempt_id});
  }
  for (AttemptId id : nodes_.find(hello.name)->attempts) {
    if (reported.contains(id)) continue;
    const auto on = attempts_.rank_on(id, hello.name);
    if (on && !on->attempt->ranks[static_cast<std::size_t>(on->rank)].exited) {
      // It may still send the exit it could not deliver while disconnected; wait a little.
      on->attempt->ranks[static_cast<std::size_t>(on->rank)].unconfirmed_since = clock_.monotonic_now();
    }
  }
  heard_stopped_unless_listed(hello.name, hello.attempts);
  spdlog::info("event=agent_connected node={} cores={} data_addr={} attempts={}", hello.name, hello.cores,
               hello.data_addr, hello.attempts.size());
  persist(std::move(registration.change), [this] { request_schedule(); });
  if (registration.gated && !health_.running_on(hello.name)) {
    start_check(HealthCheckRequest{HealthCheckKind::registration, {hello.name}, true, false, "daemon"}, nullptr);
  }
  return {};
}

void JobManager::agent_message(const std::string& node, const AgentChannel* channel, const AgentMessage& message) {
  if (!nodes_.heard_from(node, channel)) return;  // a replaced connection
  std::visit(
      [&](const auto& msg) {
        using T = std::decay_t<decltype(msg)>;
        if constexpr (std::is_same_v<T, AttemptStartedMsg>) {
          on_started(node, msg);
        } else if constexpr (std::is_same_v<T, AttemptExitedMsg>) {
          on_exited(node, msg);
        } else if constexpr (std::is_same_v<T, HeartbeatMsg>) {
          // Before anything else: the ack is what keeps the node from fencing itself.
          send_to(node, HeartbeatAckMsg{msg.seq});
          on_heartbeat(node, msg);
        } else if constexpr (std::is_same_v<T, LogReplyMsg>) {
          logs_.on_reply(node, msg);
        } else if constexpr (std::is_same_v<T, MetricsMsg>) {
          on_metrics(node, msg);
        } else if constexpr (std::is_same_v<T, FaultsMsg>) {
          on_faults(node, msg);
        } else if constexpr (std::is_same_v<T, HealthResultMsg>) {
          health_.on_result(node, msg);
        } else {
          spdlog::warn("event=unexpected_hello node={}", node);
        }
      },
      message);
}

void JobManager::agent_gone(const std::string& node, const AgentChannel* channel) {
  if (!nodes_.disconnected(node, channel)) return;  // a replaced connection
  spdlog::warn("event=agent_disconnected node={}", node);
  if (closing_agent_connections_) return;  // closed by us: the agents come back to the next daemon
  // Not down: its attempts are lost after the grace unless it comes back, or now if a peer rank
  // already saw its data-plane connection close; the node timeout still decides when it is DOWN.
  lose_ranks_of_gone_agent(node);
  const MonoTime since = nodes_.find(node)->disconnected_at.value_or(clock_.monotonic_now());
  timers_.after(config_.recovery.disconnect_grace, [this, node, since] { disconnect_grace_over(node, since); });
  if (config_.recovery.stopped_within > Millis(0)) {
    // A peer's close may already have said the node is gone: its ranks are lost once they are surely stopped.
    timers_.after(config_.recovery.stopped_within, [this, node, since] {
      const NodeEntry* entry = nodes_.find(node);
      if (entry && entry->disconnected_at == since) lose_ranks_of_gone_agent(node);
    });
  }
}

Result<void> JobManager::attempts_stopped(const AttemptsStoppedMsg& report) {
  if (Result<void> spoken = check_protocol(report.protocol); !spoken) return spoken;
  int stopped = 0;
  for (AttemptId id : report.attempts) {
    const auto on = attempts_.rank_on(id, report.node);
    if (!on || on->attempt->ranks[static_cast<std::size_t>(on->rank)].exited) continue;
    on->attempt->ranks[static_cast<std::size_t>(on->rank)].stopped_by_keeper = true;
    ++stopped;
  }
  spdlog::info("event=attempts_stopped_by_keeper node={} attempts={} running_ranks={}", report.node,
               fmt::join(report.attempts, ","), stopped);
  lose_ranks_of_gone_agent(report.node);
  // A stop the daemon was still waiting to hear of (unheard_stops.h) is heard.
  for (AttemptId id : report.attempts) heard_stopped(report.node, id);
  return {};
}

namespace {

// Goodput's inputs (goodput.h): the earliest first step any rank reports, and the longest hold-up
// by checkpoint writes (rank 0 writes them; the others wait for it in the next all-reduce).
void note_goodput_timing(Attempt& record, std::optional<TimePoint> first_step_at, std::int64_t checkpoint_ms) {
  if (first_step_at && (!record.first_step_at || *first_step_at < *record.first_step_at)) record.first_step_at = first_step_at;
  record.checkpoint_ms = std::max(record.checkpoint_ms, checkpoint_ms);
}

}  // namespace

void JobManager::on_started(const std::string& node, const AttemptStartedMsg& msg) {
  const auto on = attempts_.rank_on(msg.attempt_id, node);
  if (!on) return fence(node, msg.attempt_id, "attempt is not current");
  ActiveAttempt& attempt = *on->attempt;
  const int rank = on->rank;
  attempt.ranks[static_cast<std::size_t>(rank)].started = true;
  record_rank_environment(attempt.record.provenance, rank, msg.environment);
  const bool all_started = std::all_of(attempt.ranks.begin(), attempt.ranks.end(), [](const RankState& r) { return r.started; });
  if (!all_started || attempt.record.state != AttemptState::starting || attempt.stopping()) return;
  const TimePoint now = clock_.system_now();
  change_state(attempt.record.state, AttemptEvent::ranks_started);
  attempt.record.started_at = now;
  attempt.record.last_progress_at = now;
  attempt.running_since = clock_.monotonic_now();
  for (RankState& r : attempt.ranks) r.progress_at = attempt.running_since;
  Job& job = active_jobs_.at(attempt.record.job_id);
  const std::string nodes = join_node_names(attempt.record.nodes);
  store::Change change;
  change_job_state(job,
                   {.event = JobEvent::ranks_started,
                    .at = now,
                    .reason = "running on " + nodes,
                    .attempt = attempt.record.id,
                    .nodes = nodes,
                    .message = "job " + job_ref_text(job) + " attempt " + std::to_string(attempt.record.number) + " started on " + nodes,
                    .details = {{"attempt_number", attempt.record.number},
                                {"resumed_from", attempt.record.resumed_from.value_or("")}}},
                   change);
  change.attempts.push_back(attempt.record);
  // Debug: the stored job.started event says it, and a trivial job's four info lines cost a few
  // per cent of the daemon's CPU (bench/trivial_jobs).
  spdlog::debug("event=attempt_running job={} attempt={}", job.id, attempt.record.id);
  if (metrics_) metrics_->attempt_running(job, attempt.record, now);
  persist(std::move(change), nullptr);
}

void JobManager::note_idleness(RankState& rs, const AttemptReport& report) {
  if (!report.idle_ms) return;
  const MonoTime now = clock_.monotonic_now();
  rs.active_at = now - Millis(*report.idle_ms);
  if (report.log_bytes > rs.log_bytes) {
    rs.output_pace.note_advance(now);
    rs.log_bytes = report.log_bytes;
  }
  rs.where = report.where;
}

void JobManager::on_heartbeat(const std::string& node, const HeartbeatMsg& msg) {
  for (const auto& report : msg.attempts) {
    const auto on = attempts_.rank_on(report.attempt_id, node);
    if (!on) {
      fence(node, report.attempt_id, "attempt is not current");
      continue;
    }
    ActiveAttempt& attempt = *on->attempt;
    const int rank = on->rank;
    RankState& rs = attempt.ranks[static_cast<std::size_t>(rank)];
    rs.unconfirmed_since.reset();
    rs.steps = std::max(rs.steps, report.step);
    rs.phase = report.phase;
    rs.pace.note_phase(report.phase);
    if (report.step > rs.progress_step) {
      rs.progress_step = report.step;
      rs.progress_at = clock_.monotonic_now();
      rs.pace.note_advance(rs.progress_at);
    }
    note_idleness(rs, report);
    watch_for_stragglers(attempt, rank, report);
    Attempt& record = attempt.record;
    note_goodput_timing(record, report.first_step_at, report.checkpoint_ms);
    note_checkpoint_failures(attempt, rank, report.checkpoint_failures);
    if (report.step > record.last_step) {
      record.last_step = report.step;
      record.last_progress_at = report.last_progress_at.value_or(clock_.system_now());
    }
  }
  heard_stopped_unless_listed(node, msg.attempts);
  note_storage(node, msg);
}

void JobManager::on_exited(const std::string& node, const AttemptExitedMsg& msg) {
  const auto on = attempts_.rank_on(msg.attempt_id, node);
  if (!on) {
    spdlog::info("event=stale_exit_ignored attempt={} node={}", msg.attempt_id, node);
    return heard_stopped(node, msg.attempt_id);
  }
  ActiveAttempt& attempt = *on->attempt;
  const int rank = on->rank;
  RankState& rs = attempt.ranks[static_cast<std::size_t>(rank)];
  if (rs.exited) return;
  rs.exited = true;
  rs.started = true;
  rs.unconfirmed_since.reset();
  rs.exit_code = msg.exit_code;
  rs.signal = msg.signal;
  rs.reason = msg.reason;
  rs.log_tail = msg.log_tail;
  rs.steps = std::max(rs.steps, msg.steps);
  rs.peer_closed_rank = msg.peer_closed_rank;
  note_goodput_timing(attempt.record, msg.first_step_at, msg.checkpoint_ms);
  note_checkpoint_failures(attempt, rank, msg.checkpoint_failures);
  record_user_facts(attempt.record.provenance, rank, msg.user_facts, msg.user_facts_error);
  // A clean exit is at debug: attempt_finished follows with the outcome.
  const bool clean_exit = msg.exit_code == 0 && !msg.signal;
  spdlog::log(clean_exit ? spdlog::level::debug : spdlog::level::info,
              "event=rank_exited job={} attempt={} rank={} node={} exit_code={} signal={} reason=\"{}\"",
              attempt.record.job_id, attempt.record.id, rank, node, msg.exit_code.value_or(-1), msg.signal.value_or(0),
              msg.reason);
  const bool failed = msg.signal.has_value() || msg.exit_code.value_or(-1) != 0;
  if (failed) rs.failed_at = clock_.monotonic_now();
  if (failed && attempt.first_failed_rank < 0) attempt.first_failed_rank = rank;
  // Its peer's connection closed and the peer's agent is gone too: the peer's node is lost now
  // (it speaks for the attempt), not after the grace.
  if (const int peer = peer_lost_now(attempt, rank); peer >= 0) {
    const std::string peer_node = attempt.record.nodes[static_cast<std::size_t>(peer)];  // the attempt may end
    return lose_ranks_of_gone_agent(peer_node);
  }
  if (failed && !attempt.stopping()) kill_attempt(attempt, "rank " + std::to_string(rank) + " on " + node + " failed");
  maybe_finish(msg.attempt_id);
}

void JobManager::on_metrics(const std::string& node, const MetricsMsg& msg) {
  // Fencing: only the current attempt's ranks report. Rank 0 alone speaks for the job's metrics
  // (the loss is the global batch's, the same on every rank); any rank may report a checkpoint,
  // since a survivor writes one when its peer is lost (neuron/trainer.h, saves_at_peer_loss).
  const auto on = attempts_.rank_on(msg.attempt_id, node);
  if (!on || (on->rank != 0 && !msg.steps.empty())) {
    spdlog::warn("event=stale_metrics node={} attempt={} steps={} checkpoints={}", node, msg.attempt_id, msg.steps.size(),
                 msg.checkpoints.size());
    return;
  }
  if (msg.steps.empty() && msg.checkpoints.empty()) return;
  ActiveAttempt& attempt = *on->attempt;
  const JobId job = attempt.record.job_id;
  store::Change change;
  change.metrics.reserve(msg.steps.size());
  for (const StepMetric& step : msg.steps) change.metrics.push_back(MetricRecord{job, msg.attempt_id, step});
  // Only the current attempt's reports get here: what a fenced-off attempt writes is never recorded,
  // so no retry resumes from it.
  for (const CheckpointReport& c : msg.checkpoints) {
    attempt.newest_checkpoint_step = std::max(attempt.newest_checkpoint_step, c.step);
    change.checkpoints.push_back(store::CheckpointRecord{job, msg.attempt_id, c.step, c.manifest_sha256, clock_.system_now()});
    spdlog::info("event=checkpoint_recorded job={} attempt={} step={} manifest_sha256={}", job, msg.attempt_id, c.step,
                 c.manifest_sha256);
  }
  // Once recorded, the new checkpoint counts as valid: measuring then may prune the ones before it.
  const bool new_checkpoints = !msg.checkpoints.empty();
  persist(std::move(change), [this, job, new_checkpoints] {
    if (new_checkpoints) check_storage(job);
  });
}

void JobManager::note_checkpoint_failures(ActiveAttempt& attempt, int rank, const CheckpointFailures& reported) {
  CheckpointFailures& known = attempt.record.checkpoint_failures;
  if (reported.count <= known.count) return;
  const bool first = known.count == 0;
  known = {reported.count, masked_line(reported.last_error, 300)};
  const Job& job = active_jobs_.at(attempt.record.job_id);
  const std::string& node = attempt.record.nodes[static_cast<std::size_t>(rank)];
  spdlog::warn("event=checkpoint_failed job={} attempt={} rank={} node={} failures={} error=\"{}\"", job.id,
               attempt.record.id, rank, node, known.count, known.last_error);
  store::Change change;
  change.attempts.push_back(attempt.record);
  if (first) {
    const std::string since = attempt.newest_checkpoint_step > 0
                                  ? "the checkpoint of step " + std::to_string(attempt.newest_checkpoint_step)
                                  : "an earlier attempt's checkpoint, or from step 0";
    change.events.push_back(job_event(clock_.system_now(), "job.checkpoint_failed", job, attempt.record.id, node,
                                      "job " + job_ref_text(job) + " could not write a checkpoint on " + node +
                                          " (rank " + std::to_string(rank) + "): " + known.last_error +
                                          "; it trains on, but a retry would resume from " + since,
                                      {{"rank", rank}, {"error", known.last_error}}));
  }
  persist(std::move(change), nullptr);
}

bool JobManager::set_faults(const std::string& node, std::vector<std::string> specs) {
  return send_to(node, SetFaultsMsg{std::move(specs)});
}

void JobManager::on_faults(const std::string& node, const FaultsMsg& msg) {
  spdlog::info("event=faults_applied node={} faults=\"{}\"", node, join_node_names(msg.faults));
  persist(nodes_.set_faults(node, msg.faults), nullptr);
}

}  // namespace trainyard::daemon
