#include "daemon/job_changes.h"

#include <utility>

#include "daemon/events/events.h"

namespace trainyard::daemon {

Transition<JobState> change_job_state(Job& job, JobStateChange what, store::Change& change) {
  const Transition<JobState> taken = change_state(job.state, what.event);
  job.reason = std::move(what.reason);
  if (is_terminal(job.state)) job.ended_at = what.at;
  change.jobs.push_back(job);
  if (!taken.event_type.empty()) {
    change.events.push_back(job_event(what.at, std::string(taken.event_type), job, what.attempt, std::move(what.nodes),
                                      std::move(what.message), std::move(what.details)));
  }
  return taken;
}

}  // namespace trainyard::daemon
