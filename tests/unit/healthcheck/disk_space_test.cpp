#include "healthcheck/disk_space.h"

#include <gtest/gtest.h>

namespace trainyard::healthcheck {
namespace {

DiskSpace disk(std::string role, std::int64_t free_mb, std::int64_t total_mb) { return {std::move(role), free_mb, total_mb}; }

TEST(DiskSpace, EnoughSpaceOnEveryFilesystemIsHealthy) {
  EXPECT_EQ(low_disk_reason({disk("work", 2048, 10000), disk("checkpoint", 5000, 10000)}, {1024, 10}), std::nullopt);
  EXPECT_EQ(low_disk_reason({}, {1024, 10}), std::nullopt);
}

TEST(DiskSpace, BelowTheAbsoluteFloorNamesTheFilesystem) {
  EXPECT_EQ(low_disk_reason({disk("work", 2048, 10000), disk("checkpoint", 1023, 10000)}, {1024, 0}),
            "low disk space: checkpoint filesystem: 1023 MiB free of 10000 MiB, below 1024 MiB");
}

TEST(DiskSpace, BelowThePercentFloorIsLowEvenWithManyMegabytes) {
  // 4.99% of a large disk: plenty of MiB, too small a share.
  EXPECT_EQ(low_disk_reason({disk("work", 4999, 100000)}, {1024, 5}),
            "low disk space: work filesystem: 4999 MiB free of 100000 MiB, below 5%");
  EXPECT_EQ(low_disk_reason({disk("work", 5000, 100000)}, {1024, 5}), std::nullopt);
}

TEST(DiskSpace, EveryLowFilesystemIsNamed) {
  EXPECT_EQ(low_disk_reason({disk("work", 0, 100), disk("checkpoint", 10, 100)}, {50, 0}),
            "low disk space: work filesystem: 0 MiB free of 100 MiB, below 50 MiB; "
            "checkpoint filesystem: 10 MiB free of 100 MiB, below 50 MiB");
}

TEST(DiskSpace, ZeroFloorsTurnTheCheckOff) {
  EXPECT_EQ(low_disk_reason({disk("work", 0, 100)}, {0, 0}), std::nullopt);
}

}  // namespace
}  // namespace trainyard::healthcheck
