#pragma once
// Free cores (and memory) per node with O(1) "how many nodes could take this" queries.
//
// A scheduling pass asks, for each job it looks at, whether `n` nodes each have `c` free cores. With
// thousands of jobs per pass and a thousand nodes, scanning the nodes for every question would
// dominate, so the count of accepting nodes with at least c free cores is kept for every c, and a
// change to one node costs O(its old - new free cores), plus re-summarising its block of 64 nodes
// for placement's walks. Nodes are indices fixed by the scheduler, which keeps one index up to date
// as nodes and work change and copies it for each pass.
//
// Memory is a filter on top: most jobs ask for none, and keep the O(1) answers; a job that names
// its memory per rank is answered by walking the nodes whose cores fit (still skipping blocks).
#include <cstdint>
#include <vector>

namespace trainyard::scheduler {

// A gang's demand: `nodes` nodes, each with `cores_per_node` free cores, or whole nodes when
// `cores_per_node` is 0, and `memory_mb` free MiB on each (0: it asks for none).
struct Shape {
  int nodes = 1;
  int cores_per_node = 0;
  std::int64_t memory_mb = 0;
  bool whole_nodes() const { return cores_per_node == 0; }
  bool needs_memory() const { return memory_mb > 0; }
};

class Capacity {
 public:
  // Starts with one entry per node: its size, its free cores and whether it accepts work. A node
  // that does not accept work never fits anything.
  void add_node(int total, int free, bool accepts);
  // The node's size or acceptance changed (it registered again, drained, left): O(its cores + 64).
  void set_node(int node, int total, int free, bool accepts);

  int node_count() const { return static_cast<int>(total_.size()); }
  int total(int node) const { return total_[node]; }
  int free(int node) const { return free_[node]; }
  bool accepts(int node) const { return accepts_[node] != 0; }
  std::int64_t free_cores() const { return free_cores_; }      // on accepting nodes
  std::int64_t accepting_cores() const { return accepting_cores_; }

  void set_free(int node, int cores);

  // The node's memory in MiB and what of it work does not hold. A node that reports no memory
  // (0) holds any demand, as the daemon's submit check counts it (daemon/policy/job_fit.h).
  void set_memory(int node, std::int64_t total_mb, std::int64_t free_mb);
  std::int64_t memory(int node) const { return memory_[node]; }
  std::int64_t free_memory(int node) const { return free_memory_[node]; }

  // Whether `node` alone can hold one rank of `shape`. Inline: placement asks it of every node.
  bool node_fits(int node, const Shape& shape) const {
    if (!accepts(node) || total_[node] == 0) return false;
    if (shape.needs_memory() && memory_[node] > 0 && free_memory_[node] < shape.memory_mb) return false;
    return shape.whole_nodes() ? free_[node] == total_[node] : free_[node] >= shape.cores_per_node;
  }
  // The first node from `node` on that can hold one rank of `shape`, or node_count(). Nodes are
  // summarised in blocks, so the walk skips a block none of whose nodes can.
  int next_fitting(int node, const Shape& shape) const;
  // Accepting nodes that can each hold one rank of `shape`.
  int nodes_fitting(const Shape& shape) const;
  // The fewest free cores of an accepting node that can hold a rank of `shape` (0 when none can):
  // best fit stops at the first such node (placement.cpp). O(the largest node's cores).
  int tightest_fit(const Shape& shape) const;
  // Accepting nodes that could hold a rank of `shape` were they idle.
  int nodes_ever_fitting(const Shape& shape) const;
  // Whether at least one rank of anything needing `min_cores_per_node` (or a whole node) fits.
  bool any_room(int min_cores_per_node, bool whole_node_demand) const;

  // Equal entries and counts: an index kept up to date equals one built afresh from the same nodes.
  bool operator==(const Capacity&) const;

 private:
  static constexpr int kBlock = 64;

  void count(int node, int delta);       // free cores of `node` in or out of the counts
  void count_size(int node, int delta);  // its size in or out of them
  void summarise_block(int node);        // after the node's entry changed
  bool block_may_fit(int block, const Shape& shape) const {
    return shape.whole_nodes() ? block_fully_free_[block] > 0 : block_most_free_[block] >= shape.cores_per_node;
  }

  // The walks behind the answers for a shape that needs memory.
  int count_fitting(const Shape& shape) const;
  int tightest_fit_by_walk(const Shape& shape) const;

  std::vector<int> total_;
  std::vector<int> free_;
  std::vector<std::int64_t> memory_;       // MiB; 0: not reported
  std::vector<std::int64_t> free_memory_;  // MiB not held by work
  std::vector<char> accepts_;
  std::vector<int> at_least_;        // at_least_[c]: accepting nodes with >= c free cores, c >= 1
  std::vector<int> size_at_least_;   // size_at_least_[c]: accepting nodes with >= c cores
  int fully_free_ = 0;         // accepting nodes with every core free
  std::vector<int> fully_free_of_size_;  // [t]: those of them with t cores
  std::vector<int> block_most_free_;     // per block of kBlock nodes: the most free cores of an accepting one
  std::vector<int> block_fully_free_;    // and how many accepting ones have every core free
  std::int64_t free_cores_ = 0;
  std::int64_t accepting_cores_ = 0;
};

}  // namespace trainyard::scheduler
