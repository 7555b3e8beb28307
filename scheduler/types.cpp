#include "scheduler/types.h"

#include <cmath>

#include "proto/errors.h"
#include "proto/workload_memory.h"

namespace trainyard::scheduler {

void validate(const Config& config) {
  if (config.usage_half_life <= Millis::zero()) throw InvalidInput("usage_half_life", "must be positive");
  if (config.default_horizon <= Millis::zero()) throw InvalidInput("default_horizon", "must be positive");
  if (!(config.compute_reservation >= 0.0 && config.compute_reservation < 1.0)) {
    throw InvalidInput("compute_reservation", "must be a fraction in [0, 1)");
  }
  if (config.max_jobs_examined < 1) throw InvalidInput("max_jobs_examined", "must be at least 1");
}

void validate(const ShareSettings& settings) {
  if (!(std::isfinite(settings.weight) && settings.weight > 0)) throw InvalidInput("weight", "must be a number > 0");
  if (settings.max_running_cores && *settings.max_running_cores < 0) {
    throw InvalidInput("max_running_cores", "must not be negative");
  }
}

NodeInfo node_info(const Node& node) {
  return NodeInfo{node.name, node.cores, node.labels, accepts_work(node.state) && node.connected, node.memory_mb};
}

PendingJob pending_job(const Job& job) {
  PendingJob p;
  p.id = job.id;
  p.share = job.spec.share;
  p.priority = job.spec.priority;
  p.submitted_at = job.submitted_at;
  p.nodes = job.spec.nodes;
  p.cores_per_node = job.spec.cores_per_node;
  p.memory_mb = rank_memory_mb(job.spec);
  p.timeout_s = job.spec.timeout_s;
  p.not_before = job.not_before;
  p.array = array_limit(job);
  return p;
}

std::optional<ArrayLimit> array_limit(const Job& job) {
  if (!job.array_task || !job.array_task->limit) return std::nullopt;
  return ArrayLimit{job.array_task->array_job, *job.array_task->limit};
}

std::string to_string(ReasonCode code) {
  switch (code) {
    case ReasonCode::resources: return "resources";
    case ReasonCode::nodes_unavailable: return "nodes_unavailable";
    case ReasonCode::priority: return "priority";
    case ReasonCode::reservation: return "reservation";
    case ReasonCode::share_cap: return "share_cap";
    case ReasonCode::compute_reservation: return "compute_reservation";
    case ReasonCode::dependency: return "dependency";
    case ReasonCode::array_limit: return "array_limit";
    case ReasonCode::backoff: return "backoff";
  }
  return "unknown";
}

}  // namespace trainyard::scheduler
