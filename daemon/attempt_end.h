#pragma once
// How an attempt ends, decided from facts alone: once every rank of an attempt has exited, the job
// manager hands over the attempt and job records and what it saw of each rank, and gets back the
// records to write and the events that report them. It puts together what finish_attempt used to
// mix with bookkeeping: the facts that speak for the attempt (the first rank to fail; a lost rank,
// a failed pre-flight, a stuck diagnosis), the failure class and the retry decision
// (attempt_outcome.h), the retry arithmetic (infrastructure retries kept apart and reset by
// training progress, exponential backoff), and the nodes the job avoids from now on.
// Pure: no store, no clock (`now` is passed in), no node table; tested without a daemon.
#include <optional>
#include <string>
#include <vector>

#include "daemon/base/attempt_outcome.h"
#include "daemon/base/failure_rules.h"
#include "proto/job.h"
#include "proto/time.h"
#include "store/store.h"

namespace trainyard::daemon {

// What the daemon saw of one rank by the time it exited.
struct RankEnd {
  bool lost = false;           // its node went away
  bool health_failed = false;  // its node failed the attempt's pre-flight check
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string reason;
  std::string log_tail;
  std::int64_t steps = 0;
};

struct AttemptEndFacts {
  std::vector<RankEnd> ranks;   // rank r ran on attempt.nodes[r]
  int first_failed_rank = -1;   // speaks for the attempt: the others mostly die of the kill it caused
  bool timed_out = false;
  std::string kill_reason;      // why the daemon stopped it, if it did
  std::vector<int> stuck_ranks;  // named by the stuck diagnosis, if it was stopped as stuck
  std::vector<std::string> failed_checks;  // "node failed health check N: ..." for the nodes it hung on
  std::int64_t newest_checkpoint_step = 0;  // the newest checkpoint it reported; 0: none
  bool over_storage_quota = false;  // the job or its share held more than its storage quota
  bool quota_exceeded = false;      // the daemon stopped it for staying over its quota past the grace
  bool node_disk_low = false;       // the first failed rank's node measured its disk short of space
  // Why its pre-flight failed without judging any node (interfered with): health_failed, no node
  // excluded, never a success.
  std::string unjudged_preflight;
};

struct AttemptEndPolicy {
  const FailureRules& rules;
  int max_infra_retries = 3;
  Millis retry_backoff_base{2000};
};

// Why a failed attempt failed and what comes next: what the metrics count.
struct AttemptFailure {
  FailureClass cls;
  NextStep next = NextStep::fail;
};

struct AttemptEnd {
  Attempt attempt;            // ended: state, class, reason, exit, steps, diagnosis
  Job job;                    // its next state: done, or pending again with the retry counted
  // One of job.succeeded, job.failed, job.retrying, job.cancelled, job.requeued, job.preempted
  // (daemon/events/events.h).
  std::vector<store::Event> events;
  std::optional<AttemptFailure> failure;  // none when it succeeded or was stopped to queue again
};

AttemptEnd decide_attempt_end(Attempt attempt, Job job, const AttemptEndFacts& facts, const AttemptEndPolicy& policy,
                              TimePoint now);

}  // namespace trainyard::daemon
