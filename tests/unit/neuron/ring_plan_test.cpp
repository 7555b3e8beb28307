#include "neuron/tcp_ring_plan.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

namespace trainyard::neuron {
namespace {

class RingPlanTest : public ::testing::TestWithParam<std::tuple<int, std::size_t>> {};

// What the transport's pipelining relies on: each step sends exactly what the previous one
// received, also across the reduce-scatter/all-gather boundary of all-reduce.
TEST_P(RingPlanTest, EachStepForwardsWhatThePreviousStepReceived) {
  const auto [world, total] = GetParam();
  for (int rank = 0; rank < world; ++rank) {
    const auto steps = ring_all_reduce_steps(total, world, rank);
    ASSERT_EQ(steps.size(), static_cast<std::size_t>(2 * (world - 1)));
    for (std::size_t t = 1; t < steps.size(); ++t) EXPECT_EQ(steps[t].send, steps[t - 1].recv) << "step " << t;
  }
}

// Index of the chunk `range` is, or -1.
int chunk_index(ElementRange range, std::size_t total, int world) {
  for (int c = 0; c < world; ++c) {
    if (range == chunk_of(total, world, c)) return c;
  }
  return -1;
}

// Rank and element counts where every chunk is non-empty, so a range identifies its chunk.
class RingChunkTest : public RingPlanTest {};

// Rank r must receive (and reduce) every chunk except r-1, the one it only sends, and end on r.
TEST_P(RingChunkTest, ReduceScatterReducesEveryOtherChunkOnceAndEndsOnItsOwn) {
  const auto [world, total] = GetParam();
  for (int rank = 0; rank < world; ++rank) {
    const auto steps = ring_reduce_scatter_steps(total, world, rank);
    ASSERT_EQ(steps.size(), static_cast<std::size_t>(world - 1));
    EXPECT_EQ(steps.back().recv, chunk_of(total, world, rank));
    EXPECT_EQ(chunk_index(steps.front().send, total, world), (rank + world - 1) % world);
    std::set<int> received;
    for (const auto& step : steps) {
      EXPECT_TRUE(step.reduce);
      received.insert(chunk_index(step.recv, total, world));
    }
    EXPECT_EQ(received.size(), static_cast<std::size_t>(world - 1));
    EXPECT_FALSE(received.contains((rank + world - 1) % world));
  }
}

TEST_P(RingChunkTest, AllGatherSendsItsOwnChunkFirstAndReceivesEveryOtherOnce) {
  const auto [world, total] = GetParam();
  for (int rank = 0; rank < world; ++rank) {
    const auto steps = ring_all_gather_steps(total, world, rank);
    EXPECT_EQ(steps.front().send, chunk_of(total, world, rank));
    std::set<int> received;
    for (const auto& step : steps) {
      EXPECT_FALSE(step.reduce);
      received.insert(chunk_index(step.recv, total, world));
    }
    EXPECT_EQ(received.size(), static_cast<std::size_t>(world - 1));
    EXPECT_FALSE(received.contains(rank));
    EXPECT_FALSE(received.contains(-1));
  }
}

TEST_P(RingPlanTest, ChunksTileTheBuffer) {
  const auto [world, total] = GetParam();
  std::size_t next = 0;
  for (int rank = 0; rank < world; ++rank) {
    const ElementRange chunk = chunk_of(total, world, rank);
    EXPECT_EQ(chunk.begin, next);
    next += chunk.count;
  }
  EXPECT_EQ(next, total);
}

INSTANTIATE_TEST_SUITE_P(WorldsAndSizes, RingPlanTest,
                         ::testing::Combine(::testing::Values(2, 3, 5, 8),
                                            ::testing::Values(std::size_t{0}, std::size_t{1}, std::size_t{3},
                                                              std::size_t{7}, std::size_t{1000})));
INSTANTIATE_TEST_SUITE_P(WorldsAndSizes, RingChunkTest,
                         ::testing::Combine(::testing::Values(2, 3, 5, 8),
                                            ::testing::Values(std::size_t{8}, std::size_t{1000})));

}  // namespace
}  // namespace trainyard::neuron
