#pragma once
// Collective operations among the ranks of one attempt (docs/DESIGN.md "Collectives and the data plane"). The training
// kernel and the collective health tests are written against this interface; `TcpCommunicator`
// implements it over the agents' data-plane ports, and tests use an in-process one.
//
// Threading contract: blocking calls, made by one thread (the attempt's training thread).
// Chunking: a buffer of N elements over n ranks is split so rank r owns
// [chunk_begin(N, n, r), chunk_begin(N, n, r + 1)): sizes not divisible by n are allowed.
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>

namespace trainyard::neuron {

inline std::size_t chunk_begin(std::size_t total, int world, int rank) {
  return total * static_cast<std::size_t>(rank) / static_cast<std::size_t>(world);
}

// A collective that could not complete: a peer timed out, closed, or the link was dropped.
class CollectiveError : public std::runtime_error {
 public:
  CollectiveError(int peer_rank, const std::string& message, bool peer_closed = false)
      : std::runtime_error(message), peer_rank_(peer_rank), peer_closed_(peer_closed) {}
  int peer_rank() const { return peer_rank_; }  // the rank that did not answer; -1 if unknown
  // The peer's connection closed (its process may be gone), rather than falling silent.
  bool peer_closed() const { return peer_closed_; }

 private:
  int peer_rank_;
  bool peer_closed_;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // In place: every rank ends with the element-wise sum over all ranks.
  virtual void all_reduce_sum(std::span<float> data) = 0;
  // `mine` is this rank's chunk of `all` (per the chunking rule); every rank ends with all chunks.
  virtual void all_gather(std::span<const float> mine, std::span<float> all) = 0;
  // Every rank passes the whole `input`; `mine` receives this rank's chunk of the element-wise sum.
  virtual void reduce_scatter_sum(std::span<const float> input, std::span<float> mine) = 0;
};

}  // namespace trainyard::neuron
