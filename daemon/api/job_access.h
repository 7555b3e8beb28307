#pragma once
// Who may see and cancel a job: its owner, and the roles that read or cancel every job.
#include "daemon/base/auth.h"
#include "proto/job.h"

namespace trainyard::daemon {

inline bool can_see(const Principal& who, const Job& job) {
  return who.may(Action::read_all_jobs) || who.user == job.user;
}

inline bool can_cancel(const Principal& who, const Job& job) {
  return who.may(Action::cancel_any_job) || (who.may(Action::submit_jobs) && who.user == job.user);
}

}  // namespace trainyard::daemon
