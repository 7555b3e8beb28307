#pragma once
// Ranks an attempt was ended without: the attempt was being stopped, every rank still running was
// on a node whose connection stays open but that had not been heard from for two heartbeat
// intervals (its link cut, its agent frozen), and waiting for the node timeout to call it DOWN kept
// the rest of the gang's nodes allocated to a job that could not train (the partition soak's
// `stalled` time, bench/partition/RESULTS.md). The attempt ends at once and frees the nodes that
// were heard; each unheard node may still run its rank until its own fence stops it
// (fence_timing.h), which is surely over once the node timeout has passed since the node was last
// heard, when the daemon calls the node DOWN. Until then, or until the node is heard without the
// attempt, the node keeps the rank's cores and the job's next attempt does not start: at most one
// attempt of a job runs. (Released only by DOWN, not by the time alone: the node would otherwise
// take work for the moment before the tick calls it DOWN.) Pure: the job manager acts on it.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "proto/job.h"
#include "proto/time.h"

namespace trainyard::daemon {

class UnheardStops {
 public:
  struct Stop {
    JobId job = 0;
    AttemptId attempt = 0;
    std::string node;
    int cores = 0;                 // what the node keeps for the rank meanwhile
    MonoTime surely_stopped_at{};  // the node was last heard, plus the node timeout: it is DOWN by then
  };

  void add(Stop stop);
  // The node was heard without the attempt, or is DOWN: its stop, if one was awaited.
  std::optional<Stop> heard_stopped(const std::string& node, AttemptId attempt);
  // The attempts the node has not been heard to stop.
  std::vector<AttemptId> attempts_on(const std::string& node) const;
  // Whether some node may still run one of the job's attempts: its next one must wait.
  bool holds(JobId job) const;
  // When the last of the job's stops is surely over.
  std::optional<MonoTime> held_until(JobId job) const;
  bool empty() const { return stops_.empty(); }

 private:
  std::map<std::pair<std::string, AttemptId>, Stop> stops_;
};

}  // namespace trainyard::daemon
