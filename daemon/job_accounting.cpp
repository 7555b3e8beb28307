#include "daemon/job_accounting.h"

namespace trainyard::daemon {
namespace {

double seconds_between(TimePoint from, TimePoint to) { return std::chrono::duration<double>(to - from).count(); }

// Whole-node jobs take the cores of the nodes they got: the newest attempt's tells.
std::optional<int> cores_of(const Job& job, std::span<const Attempt> attempts) {
  if (job.spec.cores_per_node) return job.spec.nodes * *job.spec.cores_per_node;
  if (attempts.empty()) return std::nullopt;
  const Attempt& newest = attempts.back();
  return static_cast<int>(newest.nodes.size()) * newest.cores_per_node;
}

}  // namespace

JobAccounting job_accounting(const Job& job, std::span<const Attempt> attempts, TimePoint now) {
  JobAccounting a;
  const TimePoint end = job.ended_at.value_or(now);
  if (job.started_at) a.elapsed_s = seconds_between(*job.started_at, end);
  a.wait_s = seconds_between(job.submitted_at, job.started_at.value_or(end));
  a.nodes = job.spec.nodes;
  a.cores = cores_of(job, attempts);
  a.goodput = job_goodput(attempts, now);
  a.core_hours = a.goodput.allocated_core_s / 3600.0;
  return a;
}

Json to_json(const JobAccounting& a) {
  return {{"elapsed_s", a.elapsed_s ? Json(*a.elapsed_s) : Json(nullptr)},
          {"wait_s", a.wait_s},
          {"nodes", a.nodes},
          {"cores", a.cores ? Json(*a.cores) : Json(nullptr)},
          {"core_hours", a.core_hours},
          {"goodput", a.goodput.ratio()}};
}

}  // namespace trainyard::daemon
