#include "daemon/job_manager.h"

#include "daemon/canary.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "checkpoint/checkpoint.h"
#include "daemon/attempt_end.h"
#include "daemon/base/changed_entities.h"
#include "daemon/daemon_metrics.h"
#include "daemon/events/events.h"
#include "daemon/job_changes.h"
#include "daemon/policy/job_fit.h"
#include "daemon/policy/lifecycle.h"
#include "daemon/nodes/node_claims.h"
#include "daemon/telemetry/goodput.h"
#include "proto/workload_memory.h"

namespace trainyard::daemon {
std::string join_node_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ",") + name;
  return out;
}

JobManager::JobManager(StoreWorker& store, FileWorker& files, const TimeSource& clock, Timers& timers,
                       JobManagerConfig config, scheduler::Scheduler& scheduler)
    : store_(store),
      pending_(store, clock),
      files_(files),
      clock_(clock),
      timers_(timers),
      config_(std::move(config)),
      scheduler_(scheduler),
      nodes_(clock, scheduler, [this](const std::string& node) { return health_.running_on(node); }),
      health_(
          clock, timers, config_.health,
          [this](const std::string& node, const DaemonMessage& message) { return send_to(node, message); },
          [this](const std::string& node) { return nodes_.data_addr(node); }),
      monitors_(MonitorConfig{config_.periodic_check_interval, config_.canary_interval, config_.canary_nodes,
                              config_.first_comparison_after, config_.health.group_size,
                              config_.periodic_checking_share},
                nodes_, clock.monotonic_now()),
      own_pauses_(config_.tick),
      logs_(timers, config_.log_fetch_timeout,
            [this](const std::string& node, const DaemonMessage& message) { return send_to(node, message); }),
      graph_([this](JobId id) -> std::optional<JobState> {
        const auto it = active_jobs_.find(id);
        return it == active_jobs_.end() ? std::nullopt : std::optional(it->second.state);
      }) {
  store_.set_outcome_observer([this](const Result<void>& written) { note_commit(written); });
}

// ---- persistence -------------------------------------------------------------------------------

namespace {

// The turns of requests to a job or a node (request_turns.h), named as changed_entities names them.
std::string job_turn(JobId id) { return "job/" + std::to_string(id); }
std::string node_turn(const std::string& node) { return "node/" + node; }
std::string share_turn(const std::string& share) { return "share/" + share; }

}  // namespace

void JobManager::note_ended(const Job& job) {
  if (metrics_) metrics_->job_ended(job);
  recently_ended_.remember(job);
}

void JobManager::persist(store::Change change, std::function<void()> then) {
  pending_.write(std::move(change), std::move(then));
}

void JobManager::note_commit(const Result<void>& written) {
  if (!written) {
    if (!outage_.problem()) spdlog::critical("event=store_writes_failing error=\"{}\"", written.error().message);
    outage_.commit_failed(clock_.system_now(), clock_.monotonic_now(), written.error().message);
    if (metrics_) metrics_->store_commit_failed();
    return;
  }
  const std::optional<Millis> lasted = outage_.commit_succeeded(clock_.monotonic_now());
  if (!lasted) return;
  // Written behind the changes that wait, so it is stored once they are.
  const std::size_t waited = pending_.size();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(*lasted).count();
  spdlog::warn("event=store_writes_recovered after_s={} waiting={}", seconds, waited);
  store::Change change;
  change.events.push_back(node_event(clock_.system_now(), "store.recovered", "",
                                     "store writes succeed again after " + std::to_string(seconds) + " s; " +
                                         std::to_string(waited) + " change" + (waited == 1 ? "" : "s") +
                                         " that waited were stored",
                                     {{"failing_s", seconds}, {"changes_waited", waited}}));
  persist(std::move(change), nullptr);
}

void JobManager::persist_requested(store::Change change, std::function<void()> then, std::function<void()> not_stored) {
  const std::uint64_t place = pending_.place_now();
  store_.write(std::move(change), [this, place, then = std::move(then), not_stored = std::move(not_stored)](
                                      const Result<void>& written, store::Change& committed) mutable {
    if (written) return then();
    const std::vector<std::string> entities = changed_entities(committed);
    if (!pending_.carried_later(place, entities)) return not_stored();
    // A change of the daemon's own made since carries this one: stored with it, in its place.
    spdlog::warn("event=request_waits_for_store entity={} error=\"{}\"", entities.empty() ? "" : entities.front(),
                 written.error().message);
    pending_.adopt(place, std::move(committed), std::move(then));
  });
}

void JobManager::cancel(JobId id, CancelDone done, AuditOf audit) {
  turns_.take_answering(job_turn(id), std::move(done), [this, id, audit = std::move(audit)](CancelDone answer) mutable {
    cancel_in_turn(id, std::move(answer), std::move(audit));
  });
}

void JobManager::hold(JobId id, Hold by, ControlDone done, AuditOf audit) {
  turns_.take_answering(job_turn(id), std::move(done), [this, id, by, audit = std::move(audit)](ControlDone answer) mutable {
    hold_in_turn(id, by, std::move(answer), std::move(audit));
  });
}

void JobManager::release(JobId id, Hold by, ControlDone done, AuditOf audit) {
  turns_.take_answering(job_turn(id), std::move(done), [this, id, by, audit = std::move(audit)](ControlDone answer) mutable {
    release_in_turn(id, by, std::move(answer), std::move(audit));
  });
}

void JobManager::requeue_running(JobId id, ControlDone done, AuditOf audit) {
  turns_.take_answering(job_turn(id), std::move(done), [this, id, audit = std::move(audit)](ControlDone answer) mutable {
    requeue_running_in_turn(id, std::move(answer), std::move(audit));
  });
}

void JobManager::update(JobId id, JobSpec spec, ControlDone done, AuditOf audit) {
  turns_.take_answering(job_turn(id), std::move(done),
                        [this, id, spec = std::move(spec), audit = std::move(audit)](ControlDone answer) mutable {
                          update_in_turn(id, std::move(spec), std::move(answer), std::move(audit));
                        });
}

void JobManager::drain(const std::string& node, const std::string& reason, bool stop_attempts, DrainDone done,
                       AuditOf audit) {
  turns_.take_answering(node_turn(node), std::move(done),
                        [this, node, reason, stop_attempts, audit = std::move(audit)](DrainDone answer) mutable {
                          drain_in_turn(node, reason, stop_attempts, std::move(answer), std::move(audit));
                        });
}

void JobManager::undrain(const std::string& node, const std::string& by, UndrainDone done, AuditOf audit) {
  turns_.take_answering(node_turn(node), std::move(done), [this, node, by, audit = std::move(audit)](UndrainDone answer) mutable {
    undrain_in_turn(node, by, std::move(answer), std::move(audit));
  });
}

void JobManager::put_back(const Job& before) {
  auto it = active_jobs_.find(before.id);
  if (it == active_jobs_.end()) return;  // ended meanwhile: its own transition stands
  // Only what requests change: a transition of the job's own since then (an attempt's end) stands.
  Job& job = it->second;
  job.held = before.held;
  job.spec = before.spec;
  job.cancel_requested = before.cancel_requested;
  job.stopping_to = before.stopping_to;
  if (job.state == before.state) job.reason = before.reason;
  if (job.state == JobState::pending) requeue(job);
  spdlog::warn("event=request_not_stored job={} action=put_back", job.id);
}

void JobManager::restore(const store::LoadedState& state) {
  const TimePoint now = clock_.system_now();
  const MonoTime mono_now = clock_.monotonic_now();
  max_job_id_ = state.max_job_id;
  max_attempt_id_ = state.max_attempt_id;
  health_.continue_ids_after(state.max_health_check_id);
  for (const auto& share : state.shares) {
    shares_.restore(share);
    scheduler_.set_share(share.name, {share.weight, share.max_running_cores, share.storage_limit_mb});
    scheduler_.import_usage(scheduler::UsageRecord{share.name, share.usage_core_s, share.usage_at});
  }
  nodes_.restore(state.nodes);
  for (const auto& job : state.active_jobs) {
    active_jobs_[job.id] = job;
    graph_.learn(job);
  }
  for (const auto& attempt : state.active_attempts) {
    ActiveAttempt active(attempt);
    for (auto& rank : active.ranks) {
      rank.started = attempt.state == AttemptState::running;
      rank.unconfirmed_since = mono_now;  // until its agent reports it after reconnecting
      // What the daemon saw before it stopped is gone; judging from nothing called every restored
      // attempt stuck at once. Each rank gets a whole stuck_after_s from now, and its last stored
      // step, so an advance is still an advance and a command job stays under watch.
      rank.progress_step = attempt.last_step;
      rank.progress_at = mono_now;
    }
    // How long it ran before the restart only the stored wall-clock times can tell.
    if (attempt.started_at) active.running_since = mono_now - std::max(Millis(0), now - *attempt.started_at);
    active.phase = AttemptPhase::launching;  // prepared by the daemon before the restart, not again
    if (!networks_.restore(attempt.id, attempt.provenance.json())) {
      spdlog::error("event=job_network_not_restored attempt={} reason=\"its block is outside --job-network or "
                    "another attempt's\"", attempt.id);
    }
    attempts_.add(std::move(active));
    std::vector<scheduler::NodeCores> held;
    for (const auto& n : attempt.nodes) held.push_back({n, attempt.cores_per_node});
    nodes_.hold(attempt.id, attempt.nodes, attempt.cores_per_node);
    auto job = active_jobs_.find(attempt.job_id);
    if (job != active_jobs_.end()) {
      scheduler_.start_running(scheduler::RunningJob{job->first, job->second.spec.share, held,
                                                     attempt.started_at.value_or(attempt.created_at),
                                                     job->second.spec.timeout_s, scheduler::array_limit(job->second),
                                                     rank_memory_mb(job->second.spec)},
                               now);
    }
  }
  for (const auto& [id, job] : active_jobs_) {
    if (job.state == JobState::pending) requeue(job);
  }
  spdlog::info("event=restored active_jobs={} active_attempts={} nodes={} max_job_id={}", active_jobs_.size(),
               attempts_.size(), nodes_.size(), max_job_id_);
  request_schedule();
}

// ---- API side ----------------------------------------------------------------------------------

void JobManager::set_share(const std::string& name, const scheduler::ShareSettings& settings,
                           std::optional<std::vector<std::string>> members, std::function<void(Result<void>)> done,
                           AuditOf audit) {
  turns_.take_answering(share_turn(name), std::move(done),
                        [this, name, settings, members = std::move(members), audit = std::move(audit)](
                            std::function<void(Result<void>)> answer) mutable {
                          set_share_in_turn(name, settings, std::move(members), std::move(answer), std::move(audit));
                        });
}

void JobManager::delete_share(const std::string& name, std::function<void(Result<void>)> done, AuditOf audit) {
  turns_.take_answering(share_turn(name), std::move(done),
                        [this, name, audit = std::move(audit)](std::function<void(Result<void>)> answer) mutable {
                          delete_share_in_turn(name, std::move(answer), std::move(audit));
                        });
}

void JobManager::set_share_in_turn(const std::string& name, const scheduler::ShareSettings& settings,
                                   std::optional<std::vector<std::string>> members, std::function<void(Result<void>)> done,
                                   AuditOf audit) {
  // Staged on a copy of the table: memory changes only once the store holds the share.
  ShareTable staged = shares_;
  staged.set(name, settings, members);
  const TimePoint now = clock_.system_now();
  double usage_core_s = 0;
  for (const auto& usage : scheduler_.export_usage(now)) {
    if (usage.share == name) usage_core_s = usage.usage;
  }
  store::Change change;
  change.shares.push_back(staged.record(name, usage_core_s, now));
  if (audit) change.events.push_back(audit(name));
  persist_requested(
      std::move(change),
      [this, name, settings, members = std::move(members), done] {
        shares_.set(name, settings, members);
        scheduler_.set_share(name, settings);
        done({});
        request_schedule();
      },
      [name, done] { done(Error::unavailable("the change of share " + name + " could not be stored; nothing was changed")); });
}

void JobManager::delete_share_in_turn(const std::string& name, std::function<void(Result<void>)> done, AuditOf audit) {
  const auto rows = scheduler_.shares(clock_.system_now());
  const bool known =
      shares_.created(name) ||
      std::any_of(rows.begin(), rows.end(), [&](const scheduler::ShareRow& row) { return row.name == name; });
  if (!known) return done(Error::not_found("no share " + name));
  std::size_t active = 0;
  JobId example = 0;
  for (const auto& [id, job] : active_jobs_) {
    if (job.spec.share != name) continue;
    if (active++ == 0) example = id;
  }
  if (active > 0) {
    return done(Error::conflict("share " + name + " has " + std::to_string(active) + " pending or running job" +
                                (active == 1 ? "" : "s") + (example ? " (job " + job_ref_text(active_jobs_.at(example)) + ")" : "") +
                                "; cancel them or wait for them to end first"));
  }
  store::Change change;
  change.deleted_shares.push_back(name);
  if (audit) change.events.push_back(audit(name));
  persist_requested(
      std::move(change),
      [this, name, done] {
        shares_.erase(name);
        scheduler_.forget_share(name);
        spdlog::info("event=share_deleted share={}", name);
        done({});
      },
      [name, done] { done(Error::unavailable("the deletion of share " + name + " could not be stored; nothing was changed")); });
}

void JobManager::persist_usage() {
  store::Change change = usage_change();
  if (!change.shares.empty()) persist(std::move(change), nullptr);
}

store::Change JobManager::usage_change() {
  store::Change change;
  for (const auto& usage : scheduler_.export_usage(clock_.system_now())) {
    // A share whose change is being stored is left to the next time: its record here, made from
    // memory without that change, would be stored after it and undo it.
    if (turns_.running(share_turn(usage.share))) continue;
    change.shares.push_back(shares_.record(usage.share, usage.usage, usage.at));
  }
  return change;
}

void JobManager::submit(JobSpec spec, std::string user, SubmitDone done, AuditOf audit,
                        const std::unordered_set<JobId>& hidden_jobs) {
  if (Result<void> fits = can_ever_fit(spec, nodes_.nodes_by_cores()); !fits) return done(fits.error());
  if (spec.memory_mb || spec.kind == JobKind::simulated) {
    if (Result<void> fits = memory_can_ever_fit(spec, nodes_.memory_by_node()); !fits) return done(fits.error());
  }
  if (Result<void> admissible = check_array_and_dependencies(spec, hidden_jobs); !admissible) return done(admissible.error());
  // The job is built in its change and moved, never copied, on to the active view: with its spec
  // it is over a kilobyte, and each copy showed in the I/O thread's profile.
  store::Change change;
  add_drafts(change, std::move(spec), user, clock_.system_now());
  for (Job& job : change.jobs) {
    if (!job.spec.hold) continue;
    job.held = Hold::owner;
    job.reason = hold_reason(Hold::owner);
  }
  const Job& draft = change.jobs.front();
  const std::string tasks = draft.array_task ? ", an array of " + std::to_string(draft.array_task->count) + " tasks," : "";
  change.events.push_back(job_event(draft.submitted_at, "job.submitted", draft, std::nullopt, "",
                                    "job " + std::to_string(draft.id) + " (" + draft.spec.name + ")" + tasks +
                                        " submitted by " + draft.user + " to share " + draft.spec.share,
                                    {{"name", draft.spec.name}, {"nodes", draft.spec.nodes}}));
  if (audit) change.events.push_back(audit(std::to_string(draft.id)));
  store_.write(std::move(change), [this, done = std::move(done)](const Result<void>& written, store::Change& committed) {
    if (!written) return done(Error::unavailable("the job could not be stored; it was not accepted"));
    for (Job& task : committed.jobs) {
      const JobId id = task.id;
      requeue(active_jobs_.insert_or_assign(id, std::move(task)).first->second);
    }
    const Job& job = active_jobs_.at(committed.jobs.front().id);
    // Debug, not info: at thousands of submissions a second the line cost the I/O thread more than
    // the 201 did; tick() logs how many were accepted instead.
    spdlog::debug("event=job_submitted job={} user={} share={} nodes={}", job.id, job.user, job.spec.share, job.spec.nodes);
    ++accepted_since_tick_;
    done(Submitted{job, std::move(committed.job_records.front())});
    request_schedule();
  });
}

void JobManager::requeue(const Job& job) {
  if (job.held != Hold::none) return;  // queued on release
  if (unheard_.holds(job.id)) return;  // queued once its last attempt is surely stopped
  scheduler::PendingJob pending = scheduler::pending_job(job);
  pending.excluded_nodes = job.excluded_nodes;
  if (!hold_for_dependencies(job, pending)) return;
  const bool retry = job.attempts + job.infra_retries > 0;
  if (retry && job.spec.nodes_min) {
    // A retry resumes from its checkpoint on the nodes there are (data-parallel training reshards),
    // rather than waiting for the ones it lost: as many as can take it now, within the spec's range.
    const auto& entries = nodes_.entries();
    const int usable = static_cast<int>(std::count_if(entries.begin(), entries.end(), [&](const auto& kv) {
      const NodeEntry& entry = kv.second;
      const bool excluded = std::find(job.excluded_nodes.begin(), job.excluded_nodes.end(), kv.first) != job.excluded_nodes.end();
      const int wanted = job.spec.cores_per_node.value_or(entry.node.cores);
      return entry.channel && accepts_work(entry.node.state) && !excluded && entry.free_cores() >= wanted;
    }));
    pending.nodes = std::clamp(usable, *job.spec.nodes_min, job.spec.nodes);
    if (pending.nodes != job.spec.nodes) {
      spdlog::info("event=job_resized job={} nodes={} of={} nodes_min={}", job.id, pending.nodes, job.spec.nodes,
                   *job.spec.nodes_min);
    }
  }
  scheduler_.queue(pending);
  if (job.not_before) {
    // The scheduler holds the job until the system clock reaches not_before; stepped back, that
    // clock would stretch the backoff, so the backoff also ends on the monotonic clock.
    timers_.after(std::max(Millis(0), *job.not_before - clock_.system_now()),
                  [this, id = job.id, until = *job.not_before] { end_backoff(id, until); });
  }
}

void JobManager::end_backoff(JobId id, TimePoint until) {
  auto it = active_jobs_.find(id);
  if (it == active_jobs_.end() || it->second.state != JobState::pending || it->second.not_before != until) return;
  it->second.not_before.reset();
  requeue(it->second);
  request_schedule();
}

void JobManager::cancel_in_turn(JobId id, CancelDone done, AuditOf audit) {
  auto it = active_jobs_.find(id);
  if (it == active_jobs_.end()) {
    done(CancelResult::not_active, std::nullopt);
    return;
  }
  Job& job = it->second;
  const Job before = job;
  if (job.state == JobState::pending) {
    // Off the queue and out of the view at once, so no pass starts it while the cancel is stored.
    scheduler_.remove(id);
    job.cancel_requested = true;
    store::Change change;
    change_job_state(job, {.event = JobEvent::cancelled, .at = clock_.system_now(), .reason = "cancelled while pending",
                           .message = "job " + job_ref_text(job) + " cancelled while pending",
                           .details = {{"reason", "cancelled while pending"}}},
                     change);
    const Job snapshot = job;
    active_jobs_.erase(it);
    if (audit) change.events.push_back(audit(std::to_string(id)));
    persist_requested(
        std::move(change),
        [this, done, snapshot] {
          note_ended(snapshot);
          attempts_.forget_survivors(snapshot.id);
          upstream_ended(snapshot);
          done(CancelResult::cancelled, snapshot);
        },
        [this, before, done] {
          // Nothing but this cancel took the job out of the view: it goes back whole.
          requeue(active_jobs_.emplace(before.id, before).first->second);
          spdlog::warn("event=request_not_stored job={} action=put_back", before.id);
          done(CancelResult::not_stored, before);
        });
    return;
  }
  job.cancel_requested = true;
  job.reason = "cancel requested";
  const Job snapshot = job;
  store::Change change;
  change.jobs.push_back(snapshot);
  if (audit) change.events.push_back(audit(std::to_string(id)));
  persist_requested(
      std::move(change),
      [this, id, done, snapshot] {
        if (ActiveAttempt* attempt = attempts_.current(id)) {
          kill_attempt(*attempt, "cancelled on request");
          maybe_finish(attempt->record.id);  // its ranks may all be gone already, its nodes under test after a hang
        }
        done(CancelResult::cancelling, snapshot);
      },
      [this, before, done] {
        put_back(before);
        done(CancelResult::not_stored, before);
      });
}

const Job* JobManager::active_job(JobId id) const {
  auto it = active_jobs_.find(id);
  return it == active_jobs_.end() ? nullptr : &it->second;
}

std::optional<Attempt> JobManager::active_attempt(AttemptId id) const {
  const ActiveAttempt* active = attempts_.find(id);
  if (!active) return std::nullopt;
  Attempt a = active->record;
  for (const auto& rank : active->ranks) a.steps_completed = std::max(a.steps_completed, rank.steps);
  return a;
}

std::vector<NodeView> JobManager::nodes() const { return nodes_.views(); }

std::optional<NodeView> JobManager::node(const std::string& name) const { return nodes_.view(name); }

std::size_t JobManager::pending_count() const {
  return static_cast<std::size_t>(std::count_if(active_jobs_.begin(), active_jobs_.end(),
                                                [](const auto& kv) { return kv.second.state == JobState::pending; }));
}

std::size_t JobManager::pending_count(const std::string& user) const {
  return static_cast<std::size_t>(std::count_if(active_jobs_.begin(), active_jobs_.end(), [&user](const auto& kv) {
    return kv.second.state == JobState::pending && kv.second.user == user;
  }));
}

// ---- scheduling and launch ---------------------------------------------------------------------

void JobManager::request_schedule() {
  if (schedule_requested_) return;
  schedule_requested_ = true;
  timers_.after(Millis(0), [this] {
    schedule_requested_ = false;
    schedule();
  });
}

void JobManager::schedule() {
  const auto pass_began = std::chrono::steady_clock::now();
  keep_spares_warm();  // first: nodes freed since the last pass refill the spares before new work takes them
  const auto result = scheduler_.schedule(clock_.system_now());
  for (const auto& start : result.starts) {
    auto it = active_jobs_.find(start.job);
    if (it == active_jobs_.end() || it->second.state != JobState::pending) {
      scheduler_.finish(start.job, clock_.system_now());
      continue;
    }
    start_attempt(it->second, start);
  }
  consider_preemption();
  // A job that could not be placed for want of nodes (the pass reserved for it), or jobs the pass
  // did not reach: periodic checks wait (monitors.h).
  queue_waits_for_nodes_ = result.reservation.has_value() || result.hit_limit;
  if (result.hit_limit) request_schedule();  // more jobs may fit than one pass looks at
  if (metrics_) metrics_->scheduling_pass(std::chrono::steady_clock::now() - pass_began);
}

void JobManager::start_attempt(Job& job, const scheduler::Start& start) {
  const TimePoint now = clock_.system_now();
  Attempt attempt;
  attempt.id = ++max_attempt_id_;
  attempt.job_id = job.id;
  attempt.number = job.attempts + job.infra_retries + job.requeues + 1;
  attempt.cores_per_node = start.nodes.empty() ? 0 : start.nodes.front().cores;
  for (const auto& nc : start.nodes) attempt.nodes.push_back(nc.node);
  attempt.state = AttemptState::starting;  // its first state: a new record, not a change
  attempt.created_at = now;

  ++job.attempts;
  if (!job.started_at) job.started_at = now;
  job.not_before.reset();
  store::Change change;
  change_job_state(job, {.event = JobEvent::placed, .at = now, .reason = "placed on " + join_node_names(attempt.nodes)}, change);
  change.attempts.push_back(attempt);
  attempts_.add(ActiveAttempt(attempt));
  nodes_.hold(attempt.id, attempt.nodes, attempt.cores_per_node);
  spdlog::info("event=attempt_placed job={} attempt={} number={} nodes={} cores_per_node={}", job.id, attempt.id,
               attempt.number, join_node_names(attempt.nodes), attempt.cores_per_node);
  persist(std::move(change), [this, id = attempt.id] { begin_attempt(id); });
}

void JobManager::launch(AttemptId id) {
  ActiveAttempt* found = attempts_.find(id);
  if (!found) return;
  ActiveAttempt& attempt = *found;
  // A gang launches whole or not at all. If it was stopped, or lost a node, between placement and
  // this commit, no rank starts: a rank launched after its kill would run on unwatched.
  std::vector<std::pair<int, std::string>> gone;
  for (int r = 0; r < static_cast<int>(attempt.record.nodes.size()); ++r) {
    const std::string& node = attempt.record.nodes[static_cast<std::size_t>(r)];
    if (!nodes_.connected(node)) gone.emplace_back(r, node);
  }
  if (attempt.stopping() || !gone.empty()) {
    for (std::size_t r = 0; r < attempt.ranks.size(); ++r) {
      const bool is_gone = std::any_of(gone.begin(), gone.end(), [r](const auto& g) { return g.first == static_cast<int>(r); });
      if (!is_gone) attempt.ranks[r].exited = true;  // never launched: nothing to wait for
    }
    // The last of these may finish, and erase, the attempt.
    for (const auto& [r, node] : gone) rank_lost(id, r, "node_lost: node " + node + " was not connected at launch");
    maybe_finish(id);
    return;
  }
  const Job& job = active_jobs_.at(attempt.record.job_id);
  attempt.record.launched_at = clock_.system_now();  // stored with the attempt's start, as is its provenance
  attempt.record.provenance =
      AttemptProvenance(launch_provenance(job, attempt.record, admissions_of(attempt.record), attempt.resumed));
  std::vector<std::string> peers;
  for (const auto& n : attempt.record.nodes) peers.push_back(nodes_.find(n)->node.data_addr);  // all connected
  const std::optional<JobNetworkPlan> network = network_for(job, attempt.record);
  if (network) attempt.record.provenance.amend([&](Json& p) { p["network"] = network_provenance(*network); });
  // Only this attempt's ranks can join its rings; kept nowhere but in the launches.
  const std::string data_plane_secret = random_hex(32);
  for (int r = 0; r < static_cast<int>(attempt.record.nodes.size()); ++r) {
    const std::string& node = attempt.record.nodes[static_cast<std::size_t>(r)];
    LaunchMsg launch;
    launch.attempt_id = id;
    launch.job_id = job.id;
    launch.attempt_number = attempt.record.number;
    launch.kind = job.spec.kind;
    launch.command = job.spec.command;
    // The agent runs every task of an array under the array's account (TRAINYARD_ARRAY_JOB_ID):
    // no other launch may carry the names, whatever a spec stored before they were refused says.
    std::erase_if(launch.command.env, [](const auto& kv) { return kv.first.starts_with("TRAINYARD_ARRAY_"); });
    if (const auto& task = job.array_task) {
      launch.command.env["TRAINYARD_ARRAY_JOB_ID"] = std::to_string(task->array_job);
      launch.command.env["TRAINYARD_ARRAY_TASK_ID"] = std::to_string(task->index);
      launch.command.env["TRAINYARD_ARRAY_TASK_COUNT"] = std::to_string(task->count);
    }
    launch.workload = job.spec.workload;
    launch.rank = r;
    launch.world_size = static_cast<int>(attempt.record.nodes.size());
    launch.cores = attempt.record.cores_per_node;
    launch.peers = peers;
    launch.master_addr = network ? ipv4_text(network->addresses.front()) : host_of(peers.front());
    launch.job_network = network;
    const int ports = config_.master_port_last - config_.master_port_first + 1;
    launch.master_port = config_.master_port_first + static_cast<int>(id % ports);
    launch.checkpoint_dir = checkpoint_dir_of(job.id);
    launch.resume_from = attempt.record.resumed_from;
    launch.user = job.user;
    launch.job_name = job.spec.name;
    launch.node = node;
    launch.data_plane_secret = data_plane_secret;
    launch.preempt_grace_ms = config_.kill_grace_ms;
    launch.memory_mb = job.spec.memory_mb.value_or(0);
    send_to(node, launch);
  }
}

std::optional<JobNetworkPlan> JobManager::network_for(const Job& job, const Attempt& attempt) {
  if (!networks_.enabled() || job.spec.kind != JobKind::command) return std::nullopt;
  for (const auto& name : attempt.nodes) {
    const std::string& support = nodes_.find(name)->node.job_network;  // all connected
    if (support != kJobNetworkSupported) {
      spdlog::warn("event=job_network_skipped job={} attempt={} node={} reason=\"{}\"", job.id, attempt.id, name,
                   support.empty() ? "its agent does not say it can isolate an attempt" : support);
      return std::nullopt;
    }
  }
  std::string why;
  auto plan = networks_.assign(attempt.id, static_cast<int>(attempt.nodes.size()), why);
  if (!plan) spdlog::error("event=job_network_exhausted job={} attempt={} reason=\"{}\"", job.id, attempt.id, why);
  return plan;
}

std::vector<RankAdmission> JobManager::admissions_of(const Attempt& attempt) const {
  std::vector<RankAdmission> admissions;
  for (const auto& name : attempt.nodes) {
    const NodeEntry* entry = nodes_.find(name);
    if (!entry) {
      admissions.push_back({name, "", 0, ""});
      continue;
    }
    const Node& node = entry->node;
    admissions.push_back({name, node.agent_version, node.last_check_id, node.last_check_verdict});
  }
  return admissions;
}

std::string JobManager::checkpoint_dir_of(JobId job) const {
  return config_.checkpoint_root.empty() ? "" : checkpoint::job_checkpoint_dir(config_.checkpoint_root, job).string();
}

bool JobManager::send_to(const std::string& node, const DaemonMessage& message) {
  // Nothing the agent's parser would refuse leaves the daemon (proto's bounds_error); what is
  // refused here counts as not sent, as to a node that is not connected.
  if (const std::string why = bounds_error(message); !why.empty()) {
    spdlog::error("event=message_refused node={} error=\"{}\"", node, why);
    return false;
  }
  return nodes_.send(node, message);
}

void JobManager::fence(const std::string& node, AttemptId id, const std::string& why) {
  spdlog::warn("event=attempt_fenced attempt={} node={} why=\"{}\"", id, node, why);
  send_to(node, KillMsg{id, "fenced: " + why, 0});
}

}  // namespace trainyard::daemon
