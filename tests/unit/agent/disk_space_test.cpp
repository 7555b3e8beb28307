// What the agent reports of an attempt's files: its logs, and the rest of its work directory, which
// storage quotas count too.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "agent/disk_space.h"
#include "tests/support/temp_dir.h"

namespace trainyard::agent {
namespace {

void write_bytes(const std::filesystem::path& path, std::size_t bytes) { std::ofstream(path) << std::string(bytes, 'x'); }

TEST(AttemptBytes, TheWorkDirectoryCountsEveryFileButTheLogsAndFollowsNoLink) {
  TempDir dir;
  write_bytes(dir.path() / "rank-0.log", 100);
  write_bytes(dir.path() / "data.bin", 1000);
  std::filesystem::create_directories(dir.path() / "out" / "deeper");
  write_bytes(dir.path() / "out" / "deeper" / "shard.log", 500);  // a log of the job's own, not ours
  std::filesystem::create_symlink("/etc", dir.path() / "escape");
  std::filesystem::create_symlink("/etc/passwd", dir.path() / "passwd");
  EXPECT_EQ(log_bytes_in(dir.path()), 100);
  EXPECT_EQ(work_bytes_in(dir.path()), 1500);
  EXPECT_EQ(work_bytes_in(dir.path() / "missing"), 0);
}

}  // namespace
}  // namespace trainyard::agent
