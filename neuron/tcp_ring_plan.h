#pragma once
// The ring schedule (docs/DESIGN.md "Collectives and the data plane"): which chunk a rank sends to its right neighbour
// and receives from its left one at each step, per the chunking rule of communicator.h.
//
// Reduce-scatter takes n-1 steps: at step s rank r sends chunk (r-s-1) and receives chunk (r-s-2),
// adding it to its own; after the last step it holds chunk r summed over all ranks. All-gather
// takes n-1 steps: at step s rank r sends chunk (r-s) and receives chunk (r-s-1). All-reduce is
// reduce-scatter followed by all-gather. In every schedule step t+1 sends exactly what step t
// received, which is what lets the transport forward a segment as soon as it has arrived
// (pipelining across steps instead of a barrier per step).
#include <cstddef>
#include <vector>

namespace trainyard::neuron {

struct ElementRange {
  std::size_t begin = 0;
  std::size_t count = 0;
  bool operator==(const ElementRange&) const = default;
};

struct RingStep {
  ElementRange send;
  ElementRange recv;
  bool reduce = false;  // received elements are added to the local ones instead of replacing them
  bool operator==(const RingStep&) const = default;
};

ElementRange chunk_of(std::size_t total, int world, int rank);
std::vector<RingStep> ring_reduce_scatter_steps(std::size_t total, int world, int rank);
std::vector<RingStep> ring_all_gather_steps(std::size_t total, int world, int rank);
std::vector<RingStep> ring_all_reduce_steps(std::size_t total, int world, int rank);

}  // namespace trainyard::neuron
