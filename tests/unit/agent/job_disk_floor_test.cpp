// The job disk floor's decision: below the floor, the attempt that wrote the most is stopped, with
// a reason that classifies it as its own disk_full; nothing above it, with it off, or when no job wrote.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/job_disk_floor.h"

namespace trainyard::agent {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kMiB = 1024 * 1024;

TEST(JobDiskFloor, BelowTheFloorTheAttemptThatWroteMostSinceTheLastHeartbeatIsStopped) {
  // Attempt 1 holds the most, attempt 3 wrote the most since the last look.
  const std::vector<AttemptWrites> writes = {
      {1, 900 * kMiB, 899 * kMiB}, {2, 10 * kMiB, 10 * kMiB}, {3, 40 * kMiB, 8 * kMiB}};
  const auto stop = attempt_to_stop_for_disk_floor(300, 512, writes);
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->attempt, 3);
  EXPECT_THAT(stop->reason, HasSubstr("job disk floor: the node's work filesystem has 300 MiB free, below the agent's "
                                      "--job-disk-floor-mb 512"));
  EXPECT_THAT(stop->reason, HasSubstr("32768 KiB since the last heartbeat"));
}

TEST(JobDiskFloor, NothingIsStoppedAtOrAboveTheFloorOrWithTheFloorOff) {
  const std::vector<AttemptWrites> writes = {{1, 40 * kMiB, 8 * kMiB}};
  EXPECT_FALSE(attempt_to_stop_for_disk_floor(512, 512, writes));
  EXPECT_FALSE(attempt_to_stop_for_disk_floor(0, 0, writes));
  EXPECT_TRUE(attempt_to_stop_for_disk_floor(511, 512, writes));
}

// Something else fills the filesystem (or a job deletes): stopping a job would free nothing.
TEST(JobDiskFloor, NoAttemptIsStoppedWhenNoneWrote) {
  EXPECT_FALSE(attempt_to_stop_for_disk_floor(10, 512, {}));
  EXPECT_FALSE(attempt_to_stop_for_disk_floor(10, 512, {{1, 5 * kMiB, 5 * kMiB}, {2, 1 * kMiB, 3 * kMiB}}));
}

}  // namespace
}  // namespace trainyard::agent
