#pragma once
// Which jobs a job's dependencies cover, and who waits for whom: the tasks of each array (their
// indices; task ids are the array's first id + position), the final state of every job that ended,
// and the pending jobs each job holds back. Whether a dependency is met is decided by pure code in
// the scheduler (scheduler/dependencies.h); this resolves what it is asked about. No I/O: the job
// manager tells it what happens and asks it about the active jobs' states through `ActiveState`.
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "daemon/policy/ended_states.h"
#include "proto/job.h"
#include "proto/result.h"
#include "scheduler/dependencies.h"

namespace trainyard::daemon {

class JobGraph {
 public:
  // The state of a job in the active view; nullopt when it is not active.
  using ActiveState = std::function<std::optional<JobState>(JobId)>;
  explicit JobGraph(ActiveState active_state) : active_state_(std::move(active_state)) {}

  // A job restored or read back from the store: its array's indices, and its final state if it ended.
  void learn(const Job& job);
  // A submitted array's tasks, whose ids are `first` + position.
  void add_array(JobId first, std::vector<int> indices);
  // The ids `spec` depends on that the graph knows nothing of (an array counts as known once every
  // task's state is): the caller reads them from the store and learns them first.
  std::vector<JobId> unknown_dependencies(const JobSpec& spec) const;
  // Fails (invalid_input, naming depends_on[i]) for an id no job has and for aftercorr between jobs
  // that are not both arrays. A new job's id is above every existing one, so refusing unknown ids
  // also refuses every cycle. A job in `hidden` (one the submitter may not see) is refused exactly
  // as a missing one is.
  Result<void> check_dependencies(const JobSpec& spec, const std::unordered_set<JobId>& hidden = {}) const;
  // The jobs `dependency` of `job` covers, each with its state: one job, every task of an array, or
  // (aftercorr) the other array's task of the same index. A job the graph cannot place is taken as
  // still running, so its dependent waits rather than starting early.
  std::vector<scheduler::UpstreamJob> upstream_of(const Dependency& dependency, const Job& job) const;
  // `dependent` waits for each job of `upstream` to end.
  void wait(JobId dependent, const std::vector<JobId>& upstream);
  // `job` ended as `state`; returns the jobs that were waiting for it, which wait no more.
  std::vector<JobId> ended(JobId job, JobState state);

 private:
  std::optional<JobState> state_of(JobId id) const;

  ActiveState active_state_;
  EndedStates ended_;
  std::unordered_map<JobId, std::vector<int>> array_indices_;  // array job -> its indices (task id = array + position)
  std::unordered_map<JobId, std::vector<JobId>> dependents_;   // job -> pending jobs waiting for it
};

}  // namespace trainyard::daemon
