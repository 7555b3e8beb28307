// Job arrays and dependencies: the daemon's side. Whether a job may start is
// decided by pure code (scheduler/dependencies.h, the scheduler's array limits), which jobs a
// dependency covers by the job graph (daemon/job_graph.h); this file acts on the verdicts.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <climits>

#include "daemon/daemon_metrics.h"
#include "daemon/events/events.h"
#include "daemon/job_changes.h"
#include "daemon/job_manager.h"
#include "daemon/policy/lifecycle.h"
#include "proto/errors.h"

namespace trainyard::daemon {

void JobManager::remember_jobs(const std::vector<Job>& jobs) {
  for (const Job& job : jobs) graph_.learn(job);
}

std::vector<JobId> JobManager::unknown_dependencies(const JobSpec& spec) const {
  return graph_.unknown_dependencies(spec);
}

Result<void> JobManager::check_array_and_dependencies(const JobSpec& spec,
                                                       const std::unordered_set<JobId>& hidden_jobs) const {
  // The spec's array was parsed when the spec was (proto/job.h); only the daemon's limit is left.
  if (spec.array && parse_array_spec(*spec.array, INT_MAX).indices.size() > static_cast<std::size_t>(config_.max_array_size)) {
    return Error::invalid_input("array", too_many_tasks(config_.max_array_size));
  }
  return graph_.check_dependencies(spec, hidden_jobs);
}

void JobManager::add_drafts(store::Change& change, JobSpec spec, const std::string& user, TimePoint now) {
  std::optional<ArraySpec> array;
  if (spec.array) array = parse_array_spec(*spec.array, INT_MAX);
  const std::size_t count = array ? array->indices.size() : 1;
  const JobId first = max_job_id_ + 1;
  change.jobs.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    Job& draft = change.jobs.emplace_back();
    draft.id = ++max_job_id_;
    // The spec is moved into the last task and copied into the others.
    draft.spec = i + 1 == count ? std::move(spec) : spec;
    draft.user = user;
    draft.state = JobState::pending;
    draft.submitted_at = now;
    draft.reason = "queued";
    if (array) draft.array_task = ArrayTask{first, array->indices[i], static_cast<int>(count), array->limit};
  }
  if (array) graph_.add_array(first, std::move(array->indices));
}

bool JobManager::hold_for_dependencies(const Job& job, scheduler::PendingJob& pending) {
  if (job.spec.depends_on.empty()) return true;
  std::vector<scheduler::ResolvedDependency> resolved;
  for (const Dependency& d : job.spec.depends_on) resolved.push_back({d, graph_.upstream_of(d, job)});
  scheduler::DependencyCheck check = scheduler::check_dependencies(resolved);
  if (check.verdict == scheduler::DependencyVerdict::never) {
    // Not from inside the caller's walk over the active jobs: cancelled on the next turn.
    timers_.after(Millis(0), [this, id = job.id, reason = check.reason] { cancel_unmet(id, reason); });
    return false;
  }
  graph_.wait(job.id, check.waiting_for);
  pending.waiting_for = std::move(check.waiting_for);
  pending.dependency_reason = std::move(check.reason);
  return true;
}

void JobManager::upstream_ended(const Job& job) {
  const std::vector<JobId> waiting = graph_.ended(job.id, job.state);
  if (waiting.empty()) return;
  for (JobId id : waiting) {
    const auto dependent = active_jobs_.find(id);
    if (dependent != active_jobs_.end() && dependent->second.state == JobState::pending) requeue(dependent->second);
  }
  request_schedule();
}

void JobManager::cancel_unmet(JobId id, const std::string& reason) {
  auto it = active_jobs_.find(id);
  if (it == active_jobs_.end() || it->second.state != JobState::pending) return;
  Job& job = it->second;
  scheduler_.remove(id);
  store::Change change;
  change_job_state(job, {.event = JobEvent::cancelled, .at = clock_.system_now(), .reason = reason,
                         .message = "job " + job_ref_text(job) + " cancelled: " + reason, .details = {{"reason", reason}}},
                   change);
  const Job snapshot = job;
  note_ended(snapshot);
  active_jobs_.erase(it);
  spdlog::info("event=job_dependency_never_met job={} reason=\"{}\"", snapshot.id, reason);
  persist(std::move(change), [this, snapshot] { upstream_ended(snapshot); });
}

}  // namespace trainyard::daemon
