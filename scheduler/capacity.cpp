#include "scheduler/capacity.h"

#include <algorithm>
#include <cassert>

namespace trainyard::scheduler {

void Capacity::add_node(int total, int free, bool accepts) {
  assert(free >= 0 && free <= total);
  total_.push_back(total);
  free_.push_back(free);
  accepts_.push_back(accepts ? 1 : 0);
  if (static_cast<int>(at_least_.size()) <= total) {
    at_least_.resize(total + 1, 0);
    size_at_least_.resize(total + 1, 0);
  }
  if (accepts) {
    accepting_cores_ += total;
    for (int c = 1; c <= total; ++c) ++size_at_least_[c];
  }
  count(node_count() - 1, +1);
}

void Capacity::count(int node, int delta) {
  if (!accepts(node)) return;
  for (int c = 1; c <= free_[node]; ++c) at_least_[c] += delta;
  if (free_[node] == total_[node] && total_[node] > 0) fully_free_ += delta;
  free_cores_ += delta * free_[node];
}

void Capacity::set_free(int node, int cores) {
  assert(cores >= 0 && cores <= total_[node]);
  const int old = free_[node];
  if (old == cores || !accepts(node)) {
    free_[node] = cores;
    return;
  }
  if (free_[node] == total_[node]) --fully_free_;
  for (int c = std::min(old, cores) + 1; c <= std::max(old, cores); ++c) at_least_[c] += cores > old ? 1 : -1;
  free_cores_ += cores - old;
  free_[node] = cores;
  if (free_[node] == total_[node]) ++fully_free_;
}

int Capacity::nodes_fitting(const Shape& shape) const {
  if (shape.whole_nodes()) return fully_free_;
  if (shape.cores_per_node >= static_cast<int>(at_least_.size())) return 0;
  return at_least_[shape.cores_per_node];
}

int Capacity::nodes_ever_fitting(const Shape& shape) const {
  const int c = std::max(shape.cores_per_node, 1);
  return c < static_cast<int>(size_at_least_.size()) ? size_at_least_[c] : 0;
}

bool Capacity::any_room(int min_cores_per_node, bool whole_node_demand) const {
  if (whole_node_demand && fully_free_ > 0) return true;
  return min_cores_per_node > 0 && nodes_fitting(Shape{1, min_cores_per_node}) > 0;
}

}  // namespace trainyard::scheduler
