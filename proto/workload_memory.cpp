#include "proto/workload_memory.h"

#include <algorithm>
#include <vector>

namespace trainyard::inline proto {

std::int64_t simulated_kernel_memory_mb(const WorkloadSpec& w, int world_size) {
  std::vector<std::int64_t> dims{w.input_dim};
  dims.insert(dims.end(), static_cast<std::size_t>(w.depth), w.width);
  dims.push_back(w.output_dim);
  std::int64_t parameters = 0;
  std::int64_t layer_inputs = 0;
  std::int64_t layer_outputs = 0;
  for (std::size_t l = 0; l + 1 < dims.size(); ++l) {
    parameters += dims[l] * dims[l + 1] + dims[l + 1];
    layer_inputs += dims[l];
    layer_outputs += dims[l + 1];
  }
  const std::int64_t widest = *std::max_element(dims.begin(), dims.end());
  const std::int64_t teacher = w.input_dim * w.width + w.width + w.width * w.output_dim + w.output_dim;
  const std::int64_t rows = (w.global_batch + std::max(world_size, 1) - 1) / std::max(world_size, 1);
  // Live state (parameters, the two moments), the reduced gradients, a checkpoint's snapshot of
  // the state and its encoding as it is written.
  const std::int64_t state = 3 * parameters + (parameters + 1) + 3 * parameters + 3 * parameters;
  const std::int64_t activations = rows * (layer_inputs + layer_outputs)                 // per layer, kept for backward
                                   + rows * (w.input_dim + 2 * w.output_dim)             // the batch and the loss gradient
                                   + 2 * rows * widest;                                  // backward deltas
  const std::int64_t packed = 2 * std::max(rows, widest) * widest;
  const std::int64_t bytes = 4 * (state + teacher + activations + packed);
  constexpr std::int64_t kMiB = 1024 * 1024;
  return (bytes + kMiB - 1) / kMiB;
}

std::int64_t simulated_rank_memory_mb(const WorkloadSpec& workload, int world_size) {
  const std::int64_t kernel = simulated_kernel_memory_mb(workload, world_size);
  return kernel + (kernel + 3) / 4 + kSimulatedProcessMemoryMb;
}

std::int64_t rank_memory_mb(const JobSpec& spec) {
  if (spec.memory_mb) return *spec.memory_mb;
  if (spec.kind != JobKind::simulated) return 0;
  return simulated_rank_memory_mb(spec.workload, spec.nodes_min.value_or(spec.nodes));
}

}  // namespace trainyard::proto
