#pragma once
// What `GET /v1/jobs` (and `trainyard history`, like sacct) reports of each job's use of the
// cluster: how long it waited and ran, what it held, and what that time produced. Pure: the job, its
// attempts and the time of evaluation (for jobs not ended) in, figures out.
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "daemon/telemetry/goodput.h"
#include "proto/job.h"

namespace trainyard::daemon {

struct JobAccounting {
  std::optional<double> elapsed_s;  // first start to end (or now); none if it never started
  double wait_s = 0;                // submit to first start (or to its end, or now, if it never started)
  int nodes = 0;                    // as asked for
  std::optional<int> cores;         // nodes x cores_per_node; none while the job asks for whole nodes and never ran
  double core_hours = 0;            // the cores its attempts held, over their lifetime
  Goodput goodput;
};

// `attempts` of the job in creation order.
JobAccounting job_accounting(const Job& job, std::span<const Attempt> attempts, TimePoint now);

// A job array as one row of the history (`tasks` of one array, `attempts` by job id): what its tasks
// held and produced, summed (core-hours, every goodput category); elapsed from the first task's
// start to the last one's end (or now while any task has not ended), so a sweep's span; wait from
// the submission to the first task's start, how long the sweep waited before it began (the time its
// later tasks queue behind %K or busy nodes is inside its elapsed time). Nodes and cores are one
// task's, the shape every task asks for.
JobAccounting array_accounting(std::span<const Job> tasks, const std::map<JobId, std::vector<Attempt>>& attempts,
                               TimePoint now);

Json to_json(const JobAccounting& a);

}  // namespace trainyard::daemon
