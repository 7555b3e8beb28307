#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "neuron/in_process_communicator.h"

namespace trainyard::neuron {
namespace {

// Runs `body(rank, comm)` on one thread per rank and waits for all.
void on_every_rank(int world, const std::function<void(int, Communicator&)>& body,
                   std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  auto comms = make_in_process_group(world, timeout);
  std::vector<std::jthread> threads;
  for (int r = 0; r < world; ++r) threads.emplace_back([&, r] { body(r, *comms[static_cast<std::size_t>(r)]); });
}

// Integer-valued data so sums are exact in any order.
float value(int rank, std::size_t i) { return static_cast<float>((rank + 1) * 1000 + static_cast<int>(i % 997)); }

struct Shape {
  int world;
  std::size_t size;
};

class InProcessCollectives : public ::testing::TestWithParam<Shape> {};

TEST_P(InProcessCollectives, AllReduceSumsEverywhere) {
  const auto [world, size] = GetParam();
  on_every_rank(world, [&, world = world, size = size](int rank, Communicator& comm) {
    std::vector<float> data(size);
    for (std::size_t i = 0; i < size; ++i) data[i] = value(rank, i);
    comm.all_reduce_sum(data);
    for (std::size_t i = 0; i < size; ++i) {
      float expected = 0;
      for (int r = 0; r < world; ++r) expected += value(r, i);
      ASSERT_EQ(data[i], expected) << "rank " << rank << " element " << i;
    }
  });
}

TEST_P(InProcessCollectives, ReduceScatterGivesEachRankItsChunkOfTheSum) {
  const auto [world, size] = GetParam();
  on_every_rank(world, [&, world = world, size = size](int rank, Communicator& comm) {
    std::vector<float> input(size);
    for (std::size_t i = 0; i < size; ++i) input[i] = value(rank, i);
    const std::size_t begin = chunk_begin(size, world, rank), end = chunk_begin(size, world, rank + 1);
    std::vector<float> mine(end - begin);
    comm.reduce_scatter_sum(input, mine);
    for (std::size_t i = begin; i < end; ++i) {
      float expected = 0;
      for (int r = 0; r < world; ++r) expected += value(r, i);
      ASSERT_EQ(mine[i - begin], expected);
    }
  });
}

TEST_P(InProcessCollectives, AllGatherAssemblesEveryChunk) {
  const auto [world, size] = GetParam();
  on_every_rank(world, [&, world = world, size = size](int rank, Communicator& comm) {
    const std::size_t begin = chunk_begin(size, world, rank), end = chunk_begin(size, world, rank + 1);
    std::vector<float> mine;
    for (std::size_t i = begin; i < end; ++i) mine.push_back(value(rank, i));
    std::vector<float> all(size, -1.0f);
    comm.all_gather(mine, all);
    for (int r = 0; r < world; ++r) {
      for (std::size_t i = chunk_begin(size, world, r); i < chunk_begin(size, world, r + 1); ++i) {
        ASSERT_EQ(all[i], value(r, i));
      }
    }
  });
}

// Sizes below, at and above the rank count, and not divisible by it.
INSTANTIATE_TEST_SUITE_P(Sizes, InProcessCollectives,
                         ::testing::Values(Shape{1, 5}, Shape{2, 1}, Shape{3, 2}, Shape{3, 1000}, Shape{4, 4},
                                           Shape{5, 1031}, Shape{8, 7}, Shape{8, 4099}));

TEST(InProcessCommunicator, AbortFailsPeersNamingTheRank) {
  auto group = std::make_shared<InProcessGroup>(3);
  std::vector<int> named(2, -2);
  {
    std::vector<std::jthread> threads;
    for (int r = 0; r < 2; ++r) {
      threads.emplace_back([&, r] {
        InProcessCommunicator comm(group, r);
        std::vector<float> data(4, 1.0f);
        try {
          comm.all_reduce_sum(data);
        } catch (const CollectiveError& e) {
          named[static_cast<std::size_t>(r)] = e.peer_rank();
        }
      });
    }
    // Rank 2 never joins: its owner reports that it failed.
    group->abort(2, "core crashed");
  }
  EXPECT_EQ(named, (std::vector<int>{2, 2}));
}

TEST(InProcessCommunicator, MissingPeerTimesOut) {
  auto comms = make_in_process_group(2, std::chrono::milliseconds(50));
  std::vector<float> data(3, 1.0f);
  EXPECT_THROW(comms[0]->all_reduce_sum(data), CollectiveError);
}

}  // namespace
}  // namespace trainyard::neuron
