#include "scheduler/placement.h"

#include <algorithm>
#include <map>

namespace trainyard::scheduler {
namespace {

bool is_excluded(const std::vector<int>& excluded, int node) {
  return std::binary_search(excluded.begin(), excluded.end(), node);
}

// The group with the fewest candidates that still holds `needed` of them, or -1.
int tightest_group(const std::vector<int>& candidates, const std::vector<int>& group_of, int needed) {
  std::map<int, int> count;
  for (int node : candidates) {
    if (group_of[node] >= 0) ++count[group_of[node]];
  }
  int best = -1;
  int best_count = 0;
  for (const auto& [group, n] : count) {
    if (n >= needed && (best < 0 || n < best_count)) {
      best = group;
      best_count = n;
    }
  }
  return best;
}

}  // namespace

int nodes_fitting(const Capacity& capacity, const Shape& shape, const std::vector<int>& excluded) {
  int n = capacity.nodes_fitting(shape);
  for (int node : excluded) {
    // A node first named by an exclusion may be newer than `capacity`.
    if (node < capacity.node_count() && capacity.node_fits(node, shape)) --n;
  }
  return n;
}

std::optional<std::vector<int>> place(const Capacity& capacity, const std::vector<int>& group_of, const Shape& shape,
                                      const std::vector<int>& excluded) {
  if (nodes_fitting(capacity, shape, excluded) < shape.nodes) return std::nullopt;
  const auto tighter = [&](int a, int b) {
    return capacity.free(a) != capacity.free(b) ? capacity.free(a) < capacity.free(b) : a < b;
  };
  std::vector<int> candidates;
  if (shape.nodes == 1) {
    int best = -1;
    for (int node = 0; node < capacity.node_count(); ++node) {
      if (!capacity.node_fits(node, shape) || is_excluded(excluded, node)) continue;
      if (best < 0 || tighter(node, best)) best = node;
      if (capacity.free(best) == shape.cores_per_node) break;  // an exact fit: nothing later is tighter
    }
    return std::vector<int>{best};
  }
  for (int node = 0; node < capacity.node_count(); ++node) {
    if (capacity.node_fits(node, shape) && !is_excluded(excluded, node)) candidates.push_back(node);
  }
  if (const int group = tightest_group(candidates, group_of, shape.nodes); group >= 0) {
    std::erase_if(candidates, [&](int node) { return group_of[node] != group; });
  }
  std::partial_sort(candidates.begin(), candidates.begin() + shape.nodes, candidates.end(), tighter);
  candidates.resize(shape.nodes);
  return candidates;
}

}  // namespace trainyard::scheduler
