// The heavy end of the collectives' sizes, from 1 element to 256 MiB: labelled `large`, not `unit`,
// because each case moves gigabytes through loopback and holds ~1 GiB per rank.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <tuple>

#include "tests/unit/neuron/ring_harness.h"

namespace trainyard::neuron {
namespace {

class LargeCollectivesTest : public ::testing::TestWithParam<std::tuple<int, std::size_t>> {};

TEST_P(LargeCollectivesTest, AllThreeCollectivesAreExact) {
  const auto [world, size] = GetParam();
  testing::RingHarness ring(world, std::chrono::seconds(120));
  std::vector<std::vector<std::string>> failures(static_cast<std::size_t>(world));
  testing::expect_all_succeeded(ring.run([&, size = size](TcpCommunicator& comm) {
    testing::check_collectives(comm, size, failures[static_cast<std::size_t>(comm.rank())]);
  }));
  for (const auto& rank_failures : failures) EXPECT_THAT(rank_failures, ::testing::IsEmpty());
}

constexpr std::size_t k256MiBFloats = std::size_t{64} << 20;

// 256 MiB among 2 and 4 ranks, and a just-over-64 Mi-element buffer no rank count divides evenly.
INSTANTIATE_TEST_SUITE_P(Sizes, LargeCollectivesTest,
                         ::testing::Values(std::make_tuple(2, k256MiBFloats), std::make_tuple(4, k256MiBFloats),
                                           std::make_tuple(3, k256MiBFloats + 7),
                                           std::make_tuple(8, k256MiBFloats / 4 + 5)));

}  // namespace
}  // namespace trainyard::neuron
