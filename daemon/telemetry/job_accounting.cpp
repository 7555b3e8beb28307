#include "daemon/telemetry/job_accounting.h"

#include "proto/seconds.h"

namespace trainyard::daemon {
namespace {

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

JobAccounting array_accounting(std::span<const Job> tasks, const std::map<JobId, std::vector<Attempt>>& attempts,
                               TimePoint now) {
  JobAccounting a;
  if (tasks.empty()) return a;
  std::optional<TimePoint> first_start;
  std::optional<TimePoint> last_end;
  bool all_ended = true;
  for (const Job& task : tasks) {
    const auto found = attempts.find(task.id);
    const std::span<const Attempt> of_task = found == attempts.end() ? std::span<const Attempt>() : found->second;
    const JobAccounting one = job_accounting(task, of_task, now);
    a.goodput += one.goodput;
    if (!a.cores) a.cores = one.cores;
    if (task.started_at && (!first_start || *task.started_at < *first_start)) first_start = task.started_at;
    if (!task.ended_at) all_ended = false;
    if (task.ended_at && (!last_end || *task.ended_at > *last_end)) last_end = task.ended_at;
  }
  const TimePoint end = all_ended ? *last_end : now;
  if (first_start) a.elapsed_s = seconds_between(*first_start, end);
  a.wait_s = seconds_between(tasks.front().submitted_at, first_start.value_or(end));
  a.nodes = tasks.front().spec.nodes;
  a.core_hours = a.goodput.allocated_core_s / 3600.0;
  return a;
}

Json to_json(const JobAccounting& a) {
  return {{"elapsed_s", a.elapsed_s ? Json(*a.elapsed_s) : Json(nullptr)},
          {"wait_s", a.wait_s},
          {"nodes", a.nodes},
          {"cores", a.cores ? Json(*a.cores) : Json(nullptr)},
          {"core_hours", a.core_hours},
          {"goodput", to_json(a.goodput)["goodput"]}};  // null when there is nothing to judge
}

}  // namespace trainyard::daemon
