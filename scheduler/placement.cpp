#include "scheduler/placement.h"

#include <algorithm>

namespace trainyard::scheduler {
namespace {

bool is_excluded(const std::vector<int>& excluded, int node) {
  return std::binary_search(excluded.begin(), excluded.end(), node);
}

// The group with the fewest candidates that still holds `needed` of them, or -1.
int tightest_group(const std::vector<int>& candidates, const std::vector<int>& group_of, int needed) {
  std::vector<int> count;  // by group id, which are small and dense: a map cost a lookup per candidate
  for (int node : candidates) {
    const int group = group_of[node];
    if (group < 0) continue;
    if (group >= static_cast<int>(count.size())) count.resize(group + 1, 0);
    ++count[group];
  }
  int best = -1;
  int best_count = 0;
  for (int group = 0; group < static_cast<int>(count.size()); ++group) {
    const int n = count[group];
    if (n >= needed && (best < 0 || n < best_count)) {
      best = group;
      best_count = n;
    }
  }
  return best;
}

// Accepting nodes that could hold a rank of `shape`, not counting `excluded` ones.
int nodes_fitting(const Capacity& capacity, const Shape& shape, const std::vector<int>& excluded) {
  int n = capacity.nodes_fitting(shape);
  for (int node : excluded) {
    // A node first named by an exclusion may be newer than `capacity`.
    if (node < capacity.node_count() && capacity.node_fits(node, shape)) --n;
  }
  return n;
}

bool tighter(const Capacity& capacity, int a, int b) {
  return capacity.free(a) != capacity.free(b) ? capacity.free(a) < capacity.free(b) : a < b;
}

// Best fit on nodes other than `excluded`, one group when possible.
std::optional<std::vector<int>> place_excluding(const Capacity& capacity, const std::vector<int>& group_of,
                                                const Shape& shape, const std::vector<int>& excluded) {
  if (nodes_fitting(capacity, shape, excluded) < shape.nodes) return std::nullopt;
  const auto by_fit = [&](int a, int b) { return tighter(capacity, a, b); };
  if (shape.nodes == 1) {
    const int tightest = capacity.tightest_fit(shape);
    int best = -1;
    for (int node = capacity.next_fitting(0, shape); node < capacity.node_count();
         node = capacity.next_fitting(node + 1, shape)) {
      if (is_excluded(excluded, node)) continue;
      if (best < 0 || by_fit(node, best)) best = node;
      if (capacity.free(best) == tightest) break;  // no node is tighter: nothing later can win
    }
    return std::vector<int>{best};
  }
  std::vector<int> candidates;
  for (int node = capacity.next_fitting(0, shape); node < capacity.node_count();
       node = capacity.next_fitting(node + 1, shape)) {
    if (!is_excluded(excluded, node)) candidates.push_back(node);
  }
  if (const int group = tightest_group(candidates, group_of, shape.nodes); group >= 0) {
    std::erase_if(candidates, [&](int node) { return group_of[node] != group; });
  }
  std::partial_sort(candidates.begin(), candidates.begin() + shape.nodes, candidates.end(), by_fit);
  candidates.resize(shape.nodes);
  return candidates;
}

}  // namespace

std::optional<std::vector<int>> place(const Capacity& capacity, const std::vector<int>& group_of, const Shape& shape,
                                      const std::vector<int>& avoided) {
  if (auto chosen = place_excluding(capacity, group_of, shape, avoided)) return chosen;
  if (avoided.empty() || capacity.nodes_fitting(shape) < shape.nodes) return std::nullopt;
  // Only with avoided nodes: the fewest of them, then best fit (placement groups give way).
  std::vector<int> candidates;
  for (int node = capacity.next_fitting(0, shape); node < capacity.node_count();
       node = capacity.next_fitting(node + 1, shape)) {
    candidates.push_back(node);
  }
  std::partial_sort(candidates.begin(), candidates.begin() + shape.nodes, candidates.end(), [&](int a, int b) {
    const bool a_avoided = is_excluded(avoided, a);
    return a_avoided != is_excluded(avoided, b) ? !a_avoided : tighter(capacity, a, b);
  });
  candidates.resize(shape.nodes);
  return candidates;
}

}  // namespace trainyard::scheduler
