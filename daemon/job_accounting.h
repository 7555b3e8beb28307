#pragma once
// What `GET /v1/jobs` (and `trainyard history`, like sacct) reports of each job's use of the
// cluster: how long it waited and ran, what it held, and what that time produced. Pure: the job, its
// attempts and the time of evaluation (for jobs not ended) in, figures out.
#include <optional>
#include <span>

#include "daemon/goodput.h"
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

Json to_json(const JobAccounting& a);

}  // namespace trainyard::daemon
