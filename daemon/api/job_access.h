#pragma once
// Who may see and cancel a job: its owner, and the roles that read or cancel every job.
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "daemon/base/auth.h"
#include "proto/job.h"

namespace trainyard::daemon {

inline bool can_see(const Principal& who, const Job& job) {
  return who.may(Action::read_all_jobs) || who.user == job.user;
}

inline bool can_cancel(const Principal& who, const Job& job) {
  return who.may(Action::cancel_any_job) || (who.may(Action::submit_jobs) && who.user == job.user);
}

// The jobs `spec` depends on that `who` may not see (`owners` maps a job to its user; a job it
// lacks is no job): a dependency on one is refused as one on a missing job, so that it reveals
// nothing of another user's job (that it exists, how it ended, how many tasks its array has).
inline std::unordered_set<JobId> hidden_dependencies(const Principal& who, const JobSpec& spec,
                                                     const std::unordered_map<JobId, std::string>& owners) {
  std::unordered_set<JobId> hidden;
  if (who.may(Action::read_all_jobs)) return hidden;
  for (const Dependency& d : spec.depends_on) {
    const auto owner = owners.find(d.job);
    if (owner != owners.end() && owner->second != who.user) hidden.insert(d.job);
  }
  return hidden;
}

}  // namespace trainyard::daemon
