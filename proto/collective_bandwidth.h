#pragma once
// Bandwidth figures as nccl-tests defines them (github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md),
// so our numbers can be read against published ones. algbw = bytes / time. busbw rescales algbw by the share
// of the data each rank must move on the busiest link of an optimal algorithm, which makes it comparable
// across rank counts: x 2(n-1)/n for all-reduce, x (n-1)/n for all-gather and reduce-scatter,
// where `bytes` is the whole buffer (all ranks' chunks together) for those two.
#include <string_view>

namespace trainyard::inline proto {

enum class CollectiveKind { all_reduce, all_gather, reduce_scatter };

constexpr std::string_view to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
  }
  return "unknown";
}

// Bytes per second.
constexpr double algbw(double bytes, double seconds) { return bytes / seconds; }

constexpr double busbw_factor(CollectiveKind kind, int world) {
  const double n = world;
  return kind == CollectiveKind::all_reduce ? 2 * (n - 1) / n : (n - 1) / n;
}

constexpr double busbw(CollectiveKind kind, int world, double bytes, double seconds) {
  return algbw(bytes, seconds) * busbw_factor(kind, world);
}

}  // namespace trainyard::proto
