#pragma once
// A `Communicator` for ranks that are threads of one process: the kernel's and health checks'
// tests run a whole data-parallel group without sockets.
//
// Algorithm: every collective is publish, barrier, compute, barrier. Each rank publishes a pointer
// to its buffer; after the first barrier each rank reads the others' buffers directly (the owner
// of a chunk sums it over ranks 0..n-1, in that order, so every rank gets bit-identical sums);
// the second barrier keeps the buffers alive until everyone has read them. All-reduce is
// reduce-scatter into a published scratch chunk, then all-gather of those chunks, as the ring does.
//
// A rank that fails would leave the others waiting forever, so barriers have a deadline
// (CollectiveError, peer -1) and `InProcessGroup::abort` fails everyone's pending and later calls.
//
// Threading contract: one `InProcessCommunicator` per rank, each used by its own thread.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "neuron/communicator.h"

namespace trainyard::neuron {

class InProcessGroup {
 public:
  explicit InProcessGroup(int world_size, std::chrono::milliseconds timeout = std::chrono::seconds(30));

  int world_size() const { return world_size_; }
  // Makes every waiting and future collective of the group throw CollectiveError naming `rank`.
  void abort(int rank, const std::string& reason);

 private:
  friend class InProcessCommunicator;
  void arrive_and_wait(int rank);

  const int world_size_;
  const std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int arrived_ = 0;
  std::uint64_t generation_ = 0;
  int aborted_by_ = -1;
  std::string abort_reason_;
  // Per-rank published buffers of the collective in progress.
  std::vector<const float*> inputs_;
  std::vector<const float*> reduced_;
};

class InProcessCommunicator final : public Communicator {
 public:
  InProcessCommunicator(std::shared_ptr<InProcessGroup> group, int rank);

  int rank() const override { return rank_; }
  int world_size() const override { return group_->world_size(); }
  void all_reduce_sum(std::span<float> data) override;
  void all_gather(std::span<const float> mine, std::span<float> all) override;
  void reduce_scatter_sum(std::span<const float> input, std::span<float> mine) override;

 private:
  void sum_my_chunk(std::size_t total, std::span<float> mine);

  std::shared_ptr<InProcessGroup> group_;
  int rank_;
  std::vector<float> scratch_;
};

// One communicator per rank of a fresh group of `world_size`.
std::vector<std::unique_ptr<InProcessCommunicator>> make_in_process_group(
    int world_size, std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace trainyard::neuron
