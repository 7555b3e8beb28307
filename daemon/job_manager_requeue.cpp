// Hold, release, requeue and update: the user's levers on a job that is not done.
// Each is one stored transition (write-ahead, as everywhere in the job manager) with its event.
#include <spdlog/spdlog.h>

#include "daemon/events/events.h"
#include "daemon/policy/job_fit.h"
#include "daemon/job_manager.h"
#include "proto/text.h"

namespace trainyard::daemon {
namespace {

using ControlOutcome = JobManager::ControlOutcome;
using ControlResult = JobManager::ControlResult;

ControlOutcome refused(ControlResult result, std::string why) { return {result, std::nullopt, std::move(why)}; }

std::string job_name(const Job& job) { return "job " + job_ref_text(job); }

ControlOutcome not_stored(const std::string& change, const Job& job) {
  return refused(ControlResult::not_stored, "the " + change + " of " + job_name(job) + " could not be stored; nothing was changed");
}

}  // namespace

void JobManager::control_stored(store::Change change, const Job& before, const std::string& what, ControlDone done) {
  const Job snapshot = change.jobs.front();
  persist_requested(
      std::move(change),
      [this, done, snapshot] {
        // Queued only once the change is stored, so a crash cannot start a job the store still holds
        // (a held job is not queued).
        if (const Job* current = active_job(snapshot.id); current && current->state == JobState::pending) requeue(*current);
        request_schedule();
        done({ControlResult::done, snapshot, ""});
      },
      [this, done, before, what] {
        put_back(before);
        done(not_stored(what, before));
      });
}

void JobManager::hold_in_turn(JobId id, Hold by, ControlDone done, AuditOf audit) {
  auto it = active_jobs_.find(id);
  if (it == active_jobs_.end()) return done(refused(ControlResult::not_active, "has ended"));
  Job& job = it->second;
  if (job.state != JobState::pending) {
    return done(refused(ControlResult::wrong_state, "is " + to_string(job.state) + "; only a pending job can be held"));
  }
  const Job before = job;
  // An admin's hold stays an admin's: the owner holding it again must not make it theirs to release.
  if (job.held != Hold::admin) job.held = by;
  job.reason = hold_reason(job.held);
  scheduler_.remove(id);
  store::Change change;
  change.jobs.push_back(job);
  change.events.push_back(job_event(clock_.system_now(), "job.held", job, std::nullopt, "",
                                    job_name(job) + " " + job.reason, {{"held_by", to_string(job.held)}}));
  if (audit) change.events.push_back(audit(std::to_string(id)));
  spdlog::info("event=job_held job={} held_by={}", id, to_string(job.held));
  control_stored(std::move(change), before, "hold", std::move(done));
}

void JobManager::release_in_turn(JobId id, Hold by, ControlDone done, AuditOf audit) {
  auto it = active_jobs_.find(id);
  if (it == active_jobs_.end()) return done(refused(ControlResult::not_active, "has ended"));
  Job& job = it->second;
  if (job.held == Hold::none) return done(refused(ControlResult::wrong_state, "is not held"));
  if (job.held == Hold::admin && by != Hold::admin) {
    return done(refused(ControlResult::forbidden, "is held by an admin; only an admin may release it"));
  }
  const Job before = job;
  job.held = Hold::none;
  job.reason = "released; queued";
  store::Change change;
  change.jobs.push_back(job);
  change.events.push_back(job_event(clock_.system_now(), "job.released", job, std::nullopt, "",
                                    job_name(job) + " released", Json::object()));
  if (audit) change.events.push_back(audit(std::to_string(id)));
  spdlog::info("event=job_released job={}", id);
  control_stored(std::move(change), before, "release", std::move(done));
}

void JobManager::requeue_running_in_turn(JobId id, ControlDone done, AuditOf audit) {
  auto it = active_jobs_.find(id);
  if (it == active_jobs_.end()) return done(refused(ControlResult::not_active, "has ended"));
  Job& job = it->second;
  if (job.state != JobState::starting && job.state != JobState::running) {
    return done(refused(ControlResult::wrong_state, "is " + to_string(job.state) + "; only a starting or running job can be requeued"));
  }
  if (job.cancel_requested || job.stopping_to != StopIntent::none) {
    return done(refused(ControlResult::wrong_state, "is already being stopped"));
  }
  const Job before = job;
  store::Change change;
  if (audit) change.events.push_back(audit(std::to_string(id)));
  stop_to_queue_again(
      job, StopIntent::requeue, "requeued on request", std::move(change),
      [done](std::optional<Job> stored) {
        if (!stored) return done(refused(ControlResult::not_active, "ended while its requeue was stored"));
        done({ControlResult::done, std::move(stored), ""});
      },
      [this, done, before] {
        put_back(before);
        done(not_stored("requeue", before));
      });
}

void JobManager::stop_to_queue_again(Job& job, StopIntent intent, const std::string& reason, store::Change change,
                                     std::function<void(std::optional<Job>)> stored, std::function<void()> not_stored) {
  job.stopping_to = intent;
  job.reason = reason + "; stopping";
  change.jobs.insert(change.jobs.begin(), job);
  spdlog::info("event=job_stopping_to_queue_again job={} intent={} reason=\"{}\"", job.id, to_string(intent), reason);
  auto stop = [this, id = job.id, reason, stored = std::move(stored)] {
    const Job* current = active_job(id);
    if (!current) {
      // It ended while the stop was stored: its end stands, and the caller hears of it.
      if (stored) stored(std::nullopt);
      return;
    }
    if (ActiveAttempt* active = attempts_.current(id)) {
      kill_attempt(*active, reason);
      maybe_finish(active->record.id);  // its ranks may all be gone already
    }
    if (stored) stored(*current);
  };
  if (not_stored) return persist_requested(std::move(change), std::move(stop), std::move(not_stored));
  persist(std::move(change), std::move(stop));
}

bool JobManager::saves_before_stop(JobId id) const {
  const Job* job = active_job(id);
  if (!job || job->cancel_requested) return false;
  // A command job on a plain requeue gets what a cancel gets (SIGTERM, the grace); preemption asks
  // every kind to save its work.
  return job->stopping_to == StopIntent::preempt ||
         (job->stopping_to == StopIntent::requeue && job->spec.kind == JobKind::simulated);
}

void JobManager::update_in_turn(JobId id, JobSpec spec, ControlDone done, AuditOf audit) {
  auto it = active_jobs_.find(id);
  if (it == active_jobs_.end()) return done(refused(ControlResult::not_active, "has ended"));
  Job& job = it->second;
  if (job.state != JobState::pending) {
    return done(refused(ControlResult::wrong_state, "is " + to_string(job.state) + "; only a pending job can be changed"));
  }
  if (Result<void> fits = can_ever_fit(spec, nodes_.nodes_by_cores()); !fits) {  // as a submission would be
    return done({ControlResult::invalid, std::nullopt, fits.error().message, fits.error().field});
  }
  const Job unchanged = job;
  const Json before = {{"priority", job.spec.priority}, {"nodes", job.spec.nodes},
                       {"timeout_s", job.spec.timeout_s ? Json(*job.spec.timeout_s) : Json(nullptr)}};
  job.spec = std::move(spec);
  scheduler_.remove(id);  // not placed in its old shape while the change is being stored
  const Json after = {{"priority", job.spec.priority}, {"nodes", job.spec.nodes},
                      {"timeout_s", job.spec.timeout_s ? Json(*job.spec.timeout_s) : Json(nullptr)}};
  store::Change change;
  change.jobs.push_back(job);
  change.events.push_back(job_event(clock_.system_now(), "job.updated", job, std::nullopt, "",
                                    job_name(job) + " changed: " + json_text(after), {{"before", before}, {"after", after}}));
  if (audit) change.events.push_back(audit(std::to_string(id)));
  spdlog::info("event=job_updated job={} priority={} nodes={}", id, job.spec.priority, job.spec.nodes);
  control_stored(std::move(change), unchanged, "update", std::move(done));
}

}  // namespace trainyard::daemon
