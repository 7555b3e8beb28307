#include "daemon/job_graph.h"

#include <algorithm>
#include <climits>
#include <string>

namespace trainyard::daemon {

void JobGraph::learn(const Job& job) {
  if (is_terminal(job.state)) ended_.set(job.id, job.state);
  if (!job.array_task || !job.spec.array || array_indices_.contains(job.array_task->array_job)) return;
  array_indices_[job.array_task->array_job] = parse_array_spec(*job.spec.array, INT_MAX).indices;
}

void JobGraph::add_array(JobId first, std::vector<int> indices) { array_indices_[first] = std::move(indices); }

std::optional<JobState> JobGraph::state_of(JobId id) const {
  if (auto active = active_state_(id)) return active;
  return ended_.find(id);
}

std::vector<JobId> JobGraph::unknown_dependencies(const JobSpec& spec) const {
  std::vector<JobId> unknown;
  for (const Dependency& d : spec.depends_on) {
    // An array whose first task is still active may have tasks that ended before this daemon
    // started: every task's state must be known, or the dependency would wait for them forever.
    const auto array = array_indices_.find(d.job);
    const std::size_t tasks = array == array_indices_.end() ? 1 : array->second.size();
    for (std::size_t position = 0; position < tasks; ++position) {
      if (!state_of(d.job + static_cast<JobId>(position))) {
        unknown.push_back(d.job);
        break;
      }
    }
  }
  return unknown;
}

Result<void> JobGraph::check_dependencies(const JobSpec& spec, const std::unordered_set<JobId>& hidden) const {
  for (std::size_t i = 0; i < spec.depends_on.size(); ++i) {
    const Dependency& d = spec.depends_on[i];
    const std::string field = "depends_on[" + std::to_string(i) + "]";
    if (hidden.contains(d.job) || !state_of(d.job))
      return Error::invalid_input(field + ".job", "job " + std::to_string(d.job) + " does not exist");
    if (d.condition == DependencyCondition::aftercorr && (!spec.array || !array_indices_.contains(d.job))) {
      return Error::invalid_input(field + ".condition", "aftercorr pairs the tasks of two arrays: this job and job " +
                                                            std::to_string(d.job) + " must both be arrays");
    }
  }
  return {};
}

std::vector<scheduler::UpstreamJob> JobGraph::upstream_of(const Dependency& d, const Job& job) const {
  std::vector<scheduler::UpstreamJob> out;
  const auto add = [&](JobId id, std::string ref) {
    out.push_back(scheduler::UpstreamJob{id, std::move(ref), state_of(id).value_or(JobState::running)});
  };
  const auto array = array_indices_.find(d.job);
  if (array == array_indices_.end()) {
    add(d.job, std::to_string(d.job));
    return out;
  }
  const std::vector<int>& indices = array->second;
  const auto ref = [&](std::size_t position) {
    return std::to_string(d.job) + "_" + std::to_string(indices[position]);
  };
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

void JobGraph::wait(JobId dependent, const std::vector<JobId>& upstream) {
  for (JobId id : upstream) {
    auto& waiting = dependents_[id];
    if (std::find(waiting.begin(), waiting.end(), dependent) == waiting.end()) waiting.push_back(dependent);
  }
}

std::vector<JobId> JobGraph::ended(JobId job, JobState state) {
  ended_.set(job, state);
  const auto it = dependents_.find(job);
  if (it == dependents_.end()) return {};
  std::vector<JobId> waiting = std::move(it->second);
  dependents_.erase(it);
  return waiting;
}

}  // namespace trainyard::daemon
