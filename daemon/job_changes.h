#pragma once
// A job's state change with what it makes (docs/DESIGN.md "Lifecycles"): the job moves along its
// lifecycle table (daemon/policy/lifecycle.h) and the caller's store change gets the job's record
// and the event of the state it entered, so no site builds either of its own. An attempt's end,
// decided whole by decide_attempt_end (attempt_end.h), returns the same parts for its own commit.
#include <optional>
#include <string>

#include "daemon/policy/lifecycle.h"
#include "proto/job.h"
#include "proto/json_reader.h"
#include "store/store.h"

namespace trainyard::daemon {

struct JobStateChange {
  JobEvent event;
  TimePoint at;
  std::string reason;  // the job's reason from now on
  // The event's attempt, nodes, message and details; a transition that stores no event (a
  // placement: its attempt's start is the news) leaves them out.
  std::optional<AttemptId> attempt;
  std::string nodes;
  std::string message;
  Json details = Json::object();
};

// Moves `job` (ended at `what.at` when the state it enters is final), then adds its record and, where
// the table names one, its event to `change`. Throws std::logic_error for a pair outside the table.
Transition<JobState> change_job_state(Job& job, JobStateChange what, store::Change& change);

}  // namespace trainyard::daemon
