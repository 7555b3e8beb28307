#pragma once
// What one rank of a simulated job holds in memory, from its spec alone, so the daemon can refuse
// a spec no node can hold and the agent can bound the rank's process by it. Counted from the
// training kernel's own buffers (neuron/trainer.h, neuron/mlp.h): parameters, gradients and the
// two AdamW moments; a checkpoint's snapshot and its encoding; the teacher; each layer's input and
// pre-activation for this rank's share of the batch, the batch itself and the backward deltas; and
// a GEMM's two packed operands.
#include <cstdint>

#include "proto/job.h"

namespace trainyard::inline proto {

// Room for the rank's process itself besides the kernel's buffers: code, thread stacks, the channel's buffers.
inline constexpr std::int64_t kSimulatedProcessMemoryMb = 64;

// MiB (rounded up) of the kernel's buffers on one of `world_size` ranks.
std::int64_t simulated_kernel_memory_mb(const WorkloadSpec& workload, int world_size);

// What one rank may use, and so what a node must have for it: the kernel's buffers, a quarter more
// for what the count leaves out (allocator slack, the page cache of checkpoints being written), and
// the process itself.
std::int64_t simulated_rank_memory_mb(const WorkloadSpec& workload, int world_size);

// What one rank of the job holds on its node, for placement and the submit check: its memory_mb,
// else a simulated spec's need at its smallest world size; 0 for a command job that names none.
std::int64_t rank_memory_mb(const JobSpec& spec);

}  // namespace trainyard::proto
