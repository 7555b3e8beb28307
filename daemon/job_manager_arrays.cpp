// Job arrays and dependencies: the daemon's side. Whether a job may start is
// decided by pure code (scheduler/dependencies.h, the scheduler's array limits); this file resolves
// which jobs a dependency covers, and acts on the verdicts.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <climits>

#include "daemon/daemon_metrics.h"
#include "daemon/events/events.h"
#include "daemon/job_manager.h"
#include "proto/errors.h"

namespace trainyard::daemon {

void JobManager::learn_array(const Job& job) {
  if (!job.array_task || array_indices_.contains(job.array_task->array_job) || !job.spec.array) return;
  array_indices_[job.array_task->array_job] = parse_array_spec(*job.spec.array, INT_MAX).indices;
}

void JobManager::remember_jobs(const std::vector<Job>& jobs) {
  for (const Job& job : jobs) {
    if (is_terminal(job.state)) ended_states_.set(job.id, job.state);
    learn_array(job);
  }
}

std::vector<JobId> JobManager::unknown_dependencies(const JobSpec& spec) const {
  const auto known = [this](JobId id) { return active_jobs_.contains(id) || ended_states_.contains(id); };
  std::vector<JobId> unknown;
  for (const Dependency& d : spec.depends_on) {
    // An array whose first task is still active may have tasks that ended before this daemon
    // started: every task's state must be known, or the dependency would wait for them forever.
    const auto array = array_indices_.find(d.job);
    const std::size_t tasks = array == array_indices_.end() ? 1 : array->second.size();
    for (std::size_t position = 0; position < tasks; ++position) {
      if (!known(d.job + static_cast<JobId>(position))) {
        unknown.push_back(d.job);
        break;
      }
    }
  }
  return unknown;
}

Result<void> JobManager::check_array_and_dependencies(const JobSpec& spec) const {
  // The spec's array was parsed when the spec was (proto/job.h); only the daemon's limit is left.
  if (spec.array && parse_array_spec(*spec.array, INT_MAX).indices.size() > static_cast<std::size_t>(config_.max_array_size)) {
    return Error::invalid_input("array", too_many_tasks(config_.max_array_size));
  }
  for (std::size_t i = 0; i < spec.depends_on.size(); ++i) {
    const Dependency& d = spec.depends_on[i];
    const std::string field = "depends_on[" + std::to_string(i) + "]";
    // A new job's id is above every id that exists, so a dependency can only name an older job:
    // refusing unknown ids also refuses every cycle.
    if (!active_jobs_.contains(d.job) && !ended_states_.contains(d.job)) {
      return Error::invalid_input(field + ".job", "job " + std::to_string(d.job) + " does not exist");
    }
    if (d.condition == DependencyCondition::aftercorr && (!spec.array || !array_indices_.contains(d.job))) {
      return Error::invalid_input(field + ".condition", "aftercorr pairs the tasks of two arrays: this job and job " +
                                                            std::to_string(d.job) + " must both be arrays");
    }
  }
  return {};
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
  if (array) array_indices_[first] = std::move(array->indices);
}

std::vector<scheduler::UpstreamJob> JobManager::upstream_of(const Dependency& d, const Job& job) const {
  const auto state_of = [this](JobId id) -> std::optional<JobState> {
    if (auto it = active_jobs_.find(id); it != active_jobs_.end()) return it->second.state;
    if (auto ended = ended_states_.find(id)) return ended;
    return std::nullopt;
  };
  std::vector<scheduler::UpstreamJob> out;
  const auto add = [&](JobId id, std::string ref) {
    // Unknown only when its record was never read back after a restart: taken as still running,
    // so the dependent waits rather than starting early.
    out.push_back(scheduler::UpstreamJob{id, std::move(ref), state_of(id).value_or(JobState::running)});
  };
  const auto array = array_indices_.find(d.job);
  if (array == array_indices_.end()) {
    add(d.job, std::to_string(d.job));
    return out;
  }
  const std::vector<int>& indices = array->second;
  const auto ref = [&](std::size_t position) { return std::to_string(d.job) + "_" + std::to_string(indices[position]); };
  if (d.condition == DependencyCondition::aftercorr) {
    // Task N after task N of the other array; an index the other array lacks has nothing to wait for.
    const int mine = job.array_task ? job.array_task->index : -1;
    const auto at = std::lower_bound(indices.begin(), indices.end(), mine);
    if (at != indices.end() && *at == mine) add(d.job + (at - indices.begin()), ref(at - indices.begin()));
    return out;
  }
  for (std::size_t i = 0; i < indices.size(); ++i) add(d.job + static_cast<JobId>(i), ref(i));
  return out;
}

bool JobManager::hold_for_dependencies(const Job& job, scheduler::PendingJob& pending) {
  if (job.spec.depends_on.empty()) return true;
  std::vector<scheduler::ResolvedDependency> resolved;
  for (const Dependency& d : job.spec.depends_on) resolved.push_back({d, upstream_of(d, job)});
  scheduler::DependencyCheck check = scheduler::check_dependencies(resolved);
  if (check.verdict == scheduler::DependencyVerdict::never) {
    // Not from inside the caller's walk over the active jobs: cancelled on the next turn.
    timers_.after(Millis(0), [this, id = job.id, reason = check.reason] { cancel_unmet(id, reason); });
    return false;
  }
  for (JobId upstream : check.waiting_for) {
    auto& waiting = dependents_[upstream];
    if (std::find(waiting.begin(), waiting.end(), job.id) == waiting.end()) waiting.push_back(job.id);
  }
  pending.waiting_for = std::move(check.waiting_for);
  pending.dependency_reason = std::move(check.reason);
  return true;
}

void JobManager::upstream_ended(const Job& job) {
  ended_states_.set(job.id, job.state);
  const auto it = dependents_.find(job.id);
  if (it == dependents_.end()) return;
  const std::vector<JobId> waiting = std::move(it->second);
  dependents_.erase(it);
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
  job.state = JobState::cancelled;
  job.ended_at = clock_.system_now();
  job.reason = reason;
  const Job snapshot = job;
  if (metrics_) metrics_->job_ended(snapshot);
  active_jobs_.erase(it);
  spdlog::info("event=job_dependency_never_met job={} reason=\"{}\"", snapshot.id, reason);
  store::Change change;
  change.jobs.push_back(snapshot);
  change.events.push_back(job_event(*snapshot.ended_at, "job.cancelled", snapshot, std::nullopt, "",
                                    "job " + job_ref_text(snapshot) + " cancelled: " + reason, {{"reason", reason}}));
  persist(std::move(change), [this, snapshot] { upstream_ended(snapshot); });
}

}  // namespace trainyard::daemon
