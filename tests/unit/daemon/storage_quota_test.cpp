// Storage quotas as pure functions: measured bytes in, the excess and the checkpoints to prune out.
#include "daemon/policy/storage_quota.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace trainyard::daemon {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr std::int64_t kMb = kBytesPerMb;

TEST(BytesOverQuota, NoLimitsNoExcess) { EXPECT_EQ(bytes_over_quota(100 * kMb, std::nullopt, 500 * kMb, std::nullopt), 0); }

TEST(BytesOverQuota, TheLargerExcessOfJobAndShareWins) {
  EXPECT_EQ(bytes_over_quota(12 * kMb, 10, 12 * kMb, std::nullopt), 2 * kMb);
  EXPECT_EQ(bytes_over_quota(12 * kMb, 10, 40 * kMb, 35), 5 * kMb);
  EXPECT_EQ(bytes_over_quota(12 * kMb, 20, 40 * kMb, 50), 0);
}

TEST(CheckpointsToPrune, OldestFirstUntilEnoughIsFreed) {
  const std::vector<CheckpointUsage> cps = {{10, 4, true}, {20, 4, true}, {30, 4, true}, {40, 4, true}};
  EXPECT_THAT(checkpoints_to_prune(cps, 5), ElementsAre(10, 20));
  EXPECT_THAT(checkpoints_to_prune(cps, 4), ElementsAre(10));
  EXPECT_THAT(checkpoints_to_prune(cps, 0), IsEmpty());
}

TEST(CheckpointsToPrune, NeverTheNewestValidOne) {
  const std::vector<CheckpointUsage> cps = {{10, 4, true}, {20, 4, true}, {30, 4, true}};
  EXPECT_THAT(checkpoints_to_prune(cps, 1000), ElementsAre(10, 20));
  EXPECT_THAT(checkpoints_to_prune({{10, 4, true}}, 1000), IsEmpty());
}

TEST(CheckpointsToPrune, NothingNewerThanTheNewestValidOne) {
  // Step 40 is published but not reported yet: it may be the one the next retry needs.
  const std::vector<CheckpointUsage> cps = {{10, 4, false}, {20, 4, true}, {30, 4, true}, {40, 4, false}};
  EXPECT_THAT(checkpoints_to_prune(cps, 1000), ElementsAre(10, 20));
}

TEST(CheckpointsToPrune, WithoutAValidCheckpointNothingIsPruned) {
  EXPECT_THAT(checkpoints_to_prune({{10, 4, false}, {20, 4, false}}, 1000), IsEmpty());
  EXPECT_THAT(checkpoints_to_prune({}, 1000), IsEmpty());
}

}  // namespace
}  // namespace trainyard::daemon
