#pragma once
// Gang placement: choose every node of a job at once, or none.
//
// Best fit: among nodes that can hold a rank, take the ones with the fewest free cores, so partly
// used nodes fill up and whole nodes stay free for whole-node and wide jobs. A multi-node job
// first looks for one placement group (nodes sharing a value of the placement label, e.g. one
// rack) that can hold all its ranks, the tightest such group first, and only spreads across
// groups when none can. Ties go to the lower node index, so placement is deterministic.
//
// Avoided nodes (that failed the job before) are left out while enough other nodes fit. When they
// do not, the job takes as few avoided nodes as it needs, rather than wait: an avoided node that
// fits accepts work, so it passed whatever tests put it back in service, and a job that waits for
// other nodes may wait for hours, or for ever on a small cluster it has met failures all over.
#include <optional>
#include <vector>

#include "scheduler/capacity.h"

namespace trainyard::scheduler {

// `group_of[node]` is the node's placement group, or -1 when it has no placement label.
// `avoided` lists node indices the job should stay off, sorted ascending.
// Returns the chosen nodes in rank order, or nullopt when the job does not fit.
std::optional<std::vector<int>> place(const Capacity& capacity, const std::vector<int>& group_of, const Shape& shape,
                                      const std::vector<int>& avoided);

}  // namespace trainyard::scheduler
