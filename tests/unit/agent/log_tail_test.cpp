#include <fstream>
#include <gtest/gtest.h>

#include "agent/attempt_run.h"
#include "tests/support/temp_dir.h"

namespace trainyard::agent {
namespace {

std::string write_log(const TempDir& dir, const std::string& text) {
  const auto path = (dir.path() / "rank-0.log").string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(ReadLogTail, StartsOnAWholeLineWhenTheTailHasOne) {
  TempDir dir;
  EXPECT_EQ(read_log_tail(write_log(dir, "first line\nsecond\nthird\n"), 12), "third\n");
}

TEST(ReadLogTail, AProgressBarWithoutNewlinesIsCutOnACharacterBoundary) {
  TempDir dir;
  // A tqdm-style bar: carriage returns only, and block characters of 3 bytes each.
  std::string bar;
  for (int i = 0; i < 100; ++i) bar += "\r\xe2\x96\x88\xe2\x96\x88 " + std::to_string(i) + "%";
  const std::string path = write_log(dir, bar);
  for (std::int64_t max = 1; max < 40; ++max) {
    const std::string tail = read_log_tail(path, max);
    ASSERT_LE(tail.size(), static_cast<std::size_t>(max));
    ASSERT_TRUE(tail.empty() || (static_cast<unsigned char>(tail[0]) & 0xC0) != 0x80) << "max " << max;
  }
}

}  // namespace
}  // namespace trainyard::agent
