#include "neuron/tcp_ring_plan.h"

#include "neuron/communicator.h"

namespace trainyard::neuron {
namespace {

int wrap(int index, int world) { return ((index % world) + world) % world; }

// Both schedules have the same shape and differ in where the ring starts and what a receive does.
std::vector<RingStep> ring_steps(std::size_t total, int world, int rank, int first_send_offset, bool reduce) {
  std::vector<RingStep> steps;
  for (int s = 0; s + 1 < world; ++s) {
    const int send_chunk = wrap(rank - s - first_send_offset, world);
    const int recv_chunk = wrap(send_chunk - 1, world);
    steps.push_back({chunk_of(total, world, send_chunk), chunk_of(total, world, recv_chunk), reduce});
  }
  return steps;
}

}  // namespace

ElementRange chunk_of(std::size_t total, int world, int rank) {
  const std::size_t begin = chunk_begin(total, world, rank);
  return {begin, chunk_begin(total, world, rank + 1) - begin};
}

std::vector<RingStep> ring_reduce_scatter_steps(std::size_t total, int world, int rank) {
  return ring_steps(total, world, rank, 1, true);
}

std::vector<RingStep> ring_all_gather_steps(std::size_t total, int world, int rank) {
  return ring_steps(total, world, rank, 0, false);
}

std::vector<RingStep> ring_all_reduce_steps(std::size_t total, int world, int rank) {
  std::vector<RingStep> steps = ring_reduce_scatter_steps(total, world, rank);
  const std::vector<RingStep> gather = ring_all_gather_steps(total, world, rank);
  steps.insert(steps.end(), gather.begin(), gather.end());
  return steps;
}

}  // namespace trainyard::neuron
