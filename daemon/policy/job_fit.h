#pragma once
// Whether a submitted job could ever start: a job asking for more nodes than exist, or more
// cores per node than any node has, would stay PENDING for ever, so it is refused at
// submission as sbatch refuses "Requested node configuration is not available", unless the spec
// sets `wait_for_capacity` (nodes still to come).
//
// Every registered node counts, whatever its state: DRAINED, DOWN, UNHEALTHY and SUSPECT nodes come
// back, and a job refused while one is out would be refused for a passing reason. Placement labels
// only rank nodes (they never exclude one), and `nodes_min` applies to retries only (a first
// attempt waits for `nodes`), so neither changes what can ever fit. An empty cluster fits nothing.
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "proto/job.h"
#include "proto/result.h"

namespace trainyard::daemon {

// The registered nodes by core count: how many nodes have each count. A cluster has few distinct
// counts, so the check below costs nothing per node (walking every node on every submission was a
// third of the daemon's CPU with 10,000 nodes; bench/fleet).
using NodeCoreCounts = std::map<int, std::size_t>;

// Fails (invalid_input naming `nodes` or `cores_per_node`, saying what the cluster has) when no
// set of the registered nodes could ever hold the job.
Result<void> can_ever_fit(const JobSpec& spec, const NodeCoreCounts& nodes_by_cores);

// Fails (invalid_input naming `memory_mb`) when fewer than `spec.nodes` registered nodes could give
// each rank that much memory; for a simulated job without one, naming `workload` when they could not
// hold what its spec needs (proto/workload_memory.h). `node_memory_mb` holds what each node reports; a node reporting 0
// (an agent without --memory-mb) could have any, so it could hold the job.
Result<void> memory_can_ever_fit(const JobSpec& spec, const std::vector<std::int64_t>& node_memory_mb);

}  // namespace trainyard::daemon
