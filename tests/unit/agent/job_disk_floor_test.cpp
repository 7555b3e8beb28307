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
  const auto stop = attempt_to_stop_for_disk_floor({"work", 300, writes}, 512);
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->attempt, 3);
  EXPECT_THAT(stop->reason, HasSubstr("job disk floor: the node's work filesystem has 300 MiB free, below the agent's "
                                      "--job-disk-floor-mb 512"));
  EXPECT_THAT(stop->reason, HasSubstr("32768 KiB since the last heartbeat"));
}

TEST(JobDiskFloor, NothingIsStoppedAtOrAboveTheFloorOrWithTheFloorOff) {
  const std::vector<AttemptWrites> writes = {{1, 40 * kMiB, 8 * kMiB}};
  EXPECT_FALSE(attempt_to_stop_for_disk_floor({"work", 512, writes}, 512));
  EXPECT_FALSE(attempt_to_stop_for_disk_floor({"work", 0, writes}, 0));
  EXPECT_TRUE(attempt_to_stop_for_disk_floor({"work", 511, writes}, 512));
}

// Something else fills the filesystem (or a job deletes): stopping a job would free nothing.
TEST(JobDiskFloor, NoAttemptIsStoppedWhenNoneWrote) {
  EXPECT_FALSE(attempt_to_stop_for_disk_floor({"work", 10, {}}, 512));
  EXPECT_FALSE(attempt_to_stop_for_disk_floor({"work", 10, {{1, 5 * kMiB, 5 * kMiB}, {2, 1 * kMiB, 3 * kMiB}}}, 512));
}

// Issue 56: a job's checkpoint directory under the daemon's data directory (the default checkpoint
// root) filled the daemon's filesystem; that filesystem has a floor of its own, named in the reason.
TEST(JobDiskFloor, EachFilesystemBelowTheFloorStopsItsOwnWriterOnceNamingTheFilesystem) {
  const std::vector<FilesystemWrites> filesystems = {
      {"work", 100, {{1, 9 * kMiB, 1 * kMiB}, {2, 2 * kMiB, 1 * kMiB}}},
      {"checkpoint", 200, {{2, 400 * kMiB, 100 * kMiB}, {3, 1 * kMiB, 0}}},
      {"checkpoint", 5000, {{3, 900 * kMiB, 0}}},  // above the floor: its writer goes on
  };
  const auto stops = attempts_to_stop_for_disk_floor(filesystems, 512);
  ASSERT_EQ(stops.size(), 2u);
  EXPECT_EQ(stops[0].attempt, 1);
  EXPECT_THAT(stops[0].reason, HasSubstr("the node's work filesystem has 100 MiB free"));
  EXPECT_EQ(stops[1].attempt, 2);
  EXPECT_THAT(stops[1].reason, HasSubstr("job disk floor: the node's checkpoint filesystem has 200 MiB free"));
}

TEST(JobDiskFloor, AnAttemptFillingTwoFilesystemsIsStoppedOnce) {
  const std::vector<FilesystemWrites> filesystems = {{"work", 10, {{4, 9 * kMiB, 0}}},
                                                     {"checkpoint", 10, {{4, 9 * kMiB, 0}}}};
  const auto stops = attempts_to_stop_for_disk_floor(filesystems, 512);
  ASSERT_EQ(stops.size(), 1u);
  EXPECT_THAT(stops[0].reason, HasSubstr("work filesystem"));
}

}  // namespace
}  // namespace trainyard::agent
