#include "scheduler/capacity.h"

#include <algorithm>
#include <cassert>

namespace trainyard::scheduler {

void Capacity::add_node(int total, int free, bool accepts) {
  total_.push_back(0);
  free_.push_back(0);
  accepts_.push_back(0);
  memory_.push_back(0);
  free_memory_.push_back(0);
  set_node(node_count() - 1, total, free, accepts);
}

void Capacity::set_node(int node, int total, int free, bool accepts) {
  assert(free >= 0 && free <= total);
  count(node, -1);
  count_size(node, -1);
  total_[node] = total;
  free_[node] = free;
  accepts_[node] = accepts ? 1 : 0;
  if (static_cast<int>(at_least_.size()) <= total) {
    at_least_.resize(total + 1, 0);
    size_at_least_.resize(total + 1, 0);
    fully_free_of_size_.resize(total + 1, 0);
  }
  count_size(node, +1);
  count(node, +1);
  summarise_block(node);
}

void Capacity::set_memory(int node, std::int64_t total_mb, std::int64_t free_mb) {
  memory_[node] = total_mb;
  free_memory_[node] = free_mb;
}

void Capacity::summarise_block(int node) {
  const int block = node / kBlock;
  if (static_cast<int>(block_most_free_.size()) <= block) {
    block_most_free_.resize(block + 1, 0);
    block_fully_free_.resize(block + 1, 0);
  }
  int most_free = 0;
  int fully_free = 0;
  for (int n = block * kBlock; n < std::min(node_count(), (block + 1) * kBlock); ++n) {
    if (!accepts(n)) continue;
    most_free = std::max(most_free, free_[n]);
    if (free_[n] == total_[n] && total_[n] > 0) ++fully_free;
  }
  block_most_free_[block] = most_free;
  block_fully_free_[block] = fully_free;
}

int Capacity::next_fitting(int node, const Shape& shape) const {
  while (node < node_count()) {
    if (node % kBlock == 0 && !block_may_fit(node / kBlock, shape)) {
      node += kBlock;
    } else if (node_fits(node, shape)) {
      return node;
    } else {
      ++node;
    }
  }
  return node_count();
}

void Capacity::count_size(int node, int delta) {
  if (!accepts(node)) return;
  accepting_cores_ += delta * total_[node];
  for (int c = 1; c <= total_[node]; ++c) size_at_least_[c] += delta;
}

void Capacity::count(int node, int delta) {
  if (!accepts(node)) return;
  for (int c = 1; c <= free_[node]; ++c) at_least_[c] += delta;
  if (free_[node] == total_[node] && total_[node] > 0) {
    fully_free_ += delta;
    fully_free_of_size_[total_[node]] += delta;
  }
  free_cores_ += delta * free_[node];
}

void Capacity::set_free(int node, int cores) {
  assert(cores >= 0 && cores <= total_[node]);
  const int old = free_[node];
  if (old == cores || !accepts(node)) {
    free_[node] = cores;
    return;
  }
  if (free_[node] == total_[node]) {
    --fully_free_;
    --fully_free_of_size_[total_[node]];
  }
  for (int c = std::min(old, cores) + 1; c <= std::max(old, cores); ++c) at_least_[c] += cores > old ? 1 : -1;
  free_cores_ += cores - old;
  free_[node] = cores;
  if (free_[node] == total_[node]) {
    ++fully_free_;
    ++fully_free_of_size_[total_[node]];
  }
  summarise_block(node);
}

namespace {

// The count arrays only ever grow, so two indexes over the same nodes may differ in their length
// while agreeing on every count: compare them as if padded with zeros.
bool same_counts(const std::vector<int>& a, const std::vector<int>& b) {
  const std::size_t common = std::min(a.size(), b.size());
  const auto zero = [](int n) { return n == 0; };
  return std::equal(a.begin(), a.begin() + common, b.begin()) && std::all_of(a.begin() + common, a.end(), zero) &&
         std::all_of(b.begin() + common, b.end(), zero);
}

}  // namespace

bool Capacity::operator==(const Capacity& other) const {
  return total_ == other.total_ && free_ == other.free_ && accepts_ == other.accepts_ && memory_ == other.memory_ &&
         free_memory_ == other.free_memory_ &&
         same_counts(at_least_, other.at_least_) && same_counts(size_at_least_, other.size_at_least_) &&
         fully_free_ == other.fully_free_ && same_counts(fully_free_of_size_, other.fully_free_of_size_) &&
         block_most_free_ == other.block_most_free_ && block_fully_free_ == other.block_fully_free_ &&
         free_cores_ == other.free_cores_ && accepting_cores_ == other.accepting_cores_;
}

int Capacity::count_fitting(const Shape& shape) const {
  int n = 0;
  for (int node = next_fitting(0, shape); node < node_count(); node = next_fitting(node + 1, shape)) ++n;
  return n;
}

int Capacity::tightest_fit_by_walk(const Shape& shape) const {
  int tightest = 0;
  for (int node = next_fitting(0, shape); node < node_count(); node = next_fitting(node + 1, shape)) {
    if (tightest == 0 || free_[node] < tightest) tightest = free_[node];
  }
  return tightest;
}

int Capacity::nodes_fitting(const Shape& shape) const {
  if (shape.needs_memory()) return count_fitting(shape);
  if (shape.whole_nodes()) return fully_free_;
  if (shape.cores_per_node >= static_cast<int>(at_least_.size())) return 0;
  return at_least_[shape.cores_per_node];
}

int Capacity::tightest_fit(const Shape& shape) const {
  if (shape.needs_memory()) return tightest_fit_by_walk(shape);
  const int sizes = static_cast<int>(at_least_.size());
  if (shape.whole_nodes()) {
    for (int t = 1; t < sizes; ++t) {
      if (fully_free_of_size_[t] > 0) return t;
    }
    return 0;
  }
  for (int f = shape.cores_per_node; f < sizes; ++f) {
    const int with_exactly_f = at_least_[f] - (f + 1 < sizes ? at_least_[f + 1] : 0);
    if (with_exactly_f > 0) return f;
  }
  return 0;
}

int Capacity::nodes_ever_fitting(const Shape& shape) const {
  const int c = std::max(shape.cores_per_node, 1);
  if (shape.needs_memory()) {
    int n = 0;
    for (int node = 0; node < node_count(); ++node) {
      n += accepts(node) && total_[node] >= c && (memory_[node] == 0 || memory_[node] >= shape.memory_mb);
    }
    return n;
  }
  return c < static_cast<int>(size_at_least_.size()) ? size_at_least_[c] : 0;
}

bool Capacity::any_room(int min_cores_per_node, bool whole_node_demand) const {
  if (whole_node_demand && fully_free_ > 0) return true;
  return min_cores_per_node > 0 && nodes_fitting(Shape{1, min_cores_per_node}) > 0;
}

}  // namespace trainyard::scheduler
