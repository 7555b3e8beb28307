#include "neuron/in_process_communicator.h"

#include <algorithm>
#include <cassert>

namespace trainyard::neuron {

InProcessGroup::InProcessGroup(int world_size, std::chrono::milliseconds timeout)
    : world_size_(world_size),
      timeout_(timeout),
      inputs_(static_cast<std::size_t>(world_size)),
      reduced_(static_cast<std::size_t>(world_size)) {}

void InProcessGroup::abort(int rank, const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    if (aborted_by_ < 0) {
      aborted_by_ = rank;
      abort_reason_ = reason;
    }
  }
  changed_.notify_all();
}

void InProcessGroup::arrive_and_wait(int rank) {
  std::unique_lock lock(mutex_);
  const auto throw_if_aborted = [&] {
    if (aborted_by_ >= 0) {
      throw CollectiveError(aborted_by_, "rank " + std::to_string(aborted_by_) + " aborted: " + abort_reason_);
    }
  };
  throw_if_aborted();
  const std::uint64_t my_generation = generation_;
  if (++arrived_ == world_size_) {
    arrived_ = 0;
    ++generation_;
    changed_.notify_all();
    return;
  }
  const bool passed = changed_.wait_for(lock, timeout_, [&] { return generation_ != my_generation || aborted_by_ >= 0; });
  if (generation_ != my_generation) return;
  throw_if_aborted();
  if (!passed) {
    throw CollectiveError(-1, "rank " + std::to_string(rank) + ": collective timed out after " +
                                  std::to_string(timeout_.count()) + " ms waiting for peers");
  }
}

InProcessCommunicator::InProcessCommunicator(std::shared_ptr<InProcessGroup> group, int rank)
    : group_(std::move(group)), rank_(rank) {}

void InProcessCommunicator::sum_my_chunk(std::size_t total, std::span<float> mine) {
  const std::size_t begin = chunk_begin(total, world_size(), rank_);
  assert(mine.size() == chunk_begin(total, world_size(), rank_ + 1) - begin);
  std::fill(mine.begin(), mine.end(), 0.0f);
  for (const float* input : group_->inputs_) {
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i] += input[begin + i];
  }
}

void InProcessCommunicator::reduce_scatter_sum(std::span<const float> input, std::span<float> mine) {
  group_->inputs_[static_cast<std::size_t>(rank_)] = input.data();
  group_->arrive_and_wait(rank_);
  sum_my_chunk(input.size(), mine);
  group_->arrive_and_wait(rank_);
}

void InProcessCommunicator::all_gather(std::span<const float> mine, std::span<float> all) {
  group_->reduced_[static_cast<std::size_t>(rank_)] = mine.data();
  group_->arrive_and_wait(rank_);
  for (int r = 0; r < world_size(); ++r) {
    const std::size_t begin = chunk_begin(all.size(), world_size(), r);
    const std::size_t end = chunk_begin(all.size(), world_size(), r + 1);
    std::copy_n(group_->reduced_[static_cast<std::size_t>(r)], end - begin, all.begin() + static_cast<std::ptrdiff_t>(begin));
  }
  group_->arrive_and_wait(rank_);
}

void InProcessCommunicator::all_reduce_sum(std::span<float> data) {
  const std::size_t begin = chunk_begin(data.size(), world_size(), rank_);
  scratch_.resize(chunk_begin(data.size(), world_size(), rank_ + 1) - begin);
  reduce_scatter_sum(data, scratch_);
  all_gather(scratch_, data);
}

std::vector<std::unique_ptr<InProcessCommunicator>> make_in_process_group(int world_size,
                                                                          std::chrono::milliseconds timeout) {
  auto group = std::make_shared<InProcessGroup>(world_size, timeout);
  std::vector<std::unique_ptr<InProcessCommunicator>> ranks;
  for (int r = 0; r < world_size; ++r) ranks.push_back(std::make_unique<InProcessCommunicator>(group, r));
  return ranks;
}

}  // namespace trainyard::neuron
