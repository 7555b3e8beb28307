#pragma once
// Whether a job's dependencies let it start: pure, from the states of the jobs it
// depends on, which the daemon resolves (an array dependency covers all the array's tasks; an
// aftercorr one only the task with the same index).
//
//   afterok     every job it covers SUCCEEDED          never once one ended otherwise
//   afterany    every job it covers ended              -
//   afternotok  all ended, and at least one did not    never once all SUCCEEDED
//               SUCCEED (FAILED or CANCELLED)
//   aftercorr   as afterok, over the corresponding task
//
// All of a job's dependencies must be met (Slurm's ','); one that can never be met decides.
#include <string>
#include <vector>

#include "proto/job.h"

namespace trainyard::scheduler {

struct UpstreamJob {
  JobId id = 0;
  std::string ref;  // as users address it: "12" or "12_3"
  JobState state = JobState::pending;
};

struct ResolvedDependency {
  Dependency dependency;
  std::vector<UpstreamJob> jobs;  // what it covers; empty: nothing to wait for
};

enum class DependencyVerdict { met, waiting, never };

struct DependencyCheck {
  DependencyVerdict verdict = DependencyVerdict::met;
  std::vector<JobId> waiting_for;  // jobs not yet ended (waiting)
  std::string reason;              // a sentence for the queue (waiting) or the cancellation (never)
};

DependencyCheck check_dependencies(const std::vector<ResolvedDependency>& dependencies);

}  // namespace trainyard::scheduler
