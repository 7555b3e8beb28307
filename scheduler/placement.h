#pragma once
// Gang placement: choose every node of a job at once, or none.
//
// Best fit: among nodes that can hold a rank, take the ones with the fewest free cores, so partly
// used nodes fill up and whole nodes stay free for whole-node and wide jobs. A multi-node job
// first looks for one placement group (nodes sharing a value of the placement label, e.g. one
// rack) that can hold all its ranks, the tightest such group first, and only spreads across
// groups when none can. Ties go to the lower node index, so placement is deterministic.
#include <optional>
#include <vector>

#include "scheduler/capacity.h"

namespace trainyard::scheduler {

// `group_of[node]` is the node's placement group, or -1 when it has no placement label.
// `excluded` lists node indices the job must avoid, sorted ascending.
// Returns the chosen nodes in rank order, or nullopt when the job does not fit.
std::optional<std::vector<int>> place(const Capacity& capacity, const std::vector<int>& group_of, const Shape& shape,
                                      const std::vector<int>& excluded);

// Accepting nodes that could hold a rank of `shape`, not counting `excluded` ones.
int nodes_fitting(const Capacity& capacity, const Shape& shape, const std::vector<int>& excluded);

}  // namespace trainyard::scheduler
