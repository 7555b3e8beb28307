#include <sys/stat.h>

#include <filesystem>
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
  const LogTail tail = read_log_tail(write_log(dir, "first line\nsecond\nthird\n"), 12);
  EXPECT_EQ(tail.text, "third\n");
  EXPECT_TRUE(tail.truncated);
  EXPECT_EQ(tail.log_bytes, 24);
}

TEST(ReadLogTail, CountsLinesLikeTailN) {
  TempDir dir;
  const std::string path = write_log(dir, "1\n2\n3\n4\n");
  EXPECT_EQ(read_log_tail(path, 1 << 20, 2).text, "3\n4\n");
  EXPECT_TRUE(read_log_tail(path, 1 << 20, 2).truncated);
  EXPECT_EQ(read_log_tail(path, 1 << 20, 4).text, "1\n2\n3\n4\n");
  EXPECT_FALSE(read_log_tail(path, 1 << 20, 4).truncated);
  EXPECT_EQ(read_log_tail(write_log(dir, "a\nb"), 1 << 20, 1).text, "b");  // a last line without its newline
}

TEST(ReadLogTail, AProgressBarWithoutNewlinesIsCutOnACharacterBoundary) {
  TempDir dir;
  // A tqdm-style bar: carriage returns only, and block characters of 3 bytes each.
  std::string bar;
  for (int i = 0; i < 100; ++i) bar += "\r\xe2\x96\x88\xe2\x96\x88 " + std::to_string(i) + "%";
  const std::string path = write_log(dir, bar);
  for (std::int64_t max = 1; max < 40; ++max) {
    const std::string tail = read_log_tail(path, max).text;
    ASSERT_LE(tail.size(), static_cast<std::size_t>(max));
    ASSERT_TRUE(tail.empty() || (static_cast<unsigned char>(tail[0]) & 0xC0) != 0x80) << "max " << max;
  }
}

TEST(ReadLogTail, AHugeLineIsShownByItsEndsAndTheLinesBeforeItStayVisible) {
  TempDir dir;
  const std::string huge = "HEAD" + std::string(10 << 20, 'x') + "\xc3\xa9TAIL";  // 10 MiB, ends on a 2-byte character
  const std::string path = write_log(dir, "loss 2.1\nloss 2.0\n" + huge + "\nafter\n");
  const LogTail tail = read_log_tail(path, 1 << 20, 1000);
  EXPECT_TRUE(tail.truncated);
  EXPECT_LT(tail.text.size(), 8192u);
  EXPECT_TRUE(tail.text.starts_with("loss 2.1\nloss 2.0\nHEAD")) << tail.text.substr(0, 80);
  EXPECT_NE(tail.text.find(" bytes of this line not shown ...] "), std::string::npos);
  EXPECT_TRUE(tail.text.ends_with("x\xc3\xa9TAIL\nafter\n")) << tail.text.substr(tail.text.size() - 40);
  EXPECT_EQ(read_log_tail(path, 1 << 20, 2).text.substr(0, 4), "HEAD") << "tail -n 2: the huge line and the last";
}

TEST(ReadLogTail, AFifoOrALinkInTheLogsPlaceIsNotReadAndDoesNotBlock) {
  TempDir dir;
  const auto fifo = dir.path() / "rank-0.log";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(read_log_tail(fifo.string(), 4096).readable);  // would block for ever if opened to read
  const auto secret = dir.path() / "secret";
  std::ofstream(secret) << "someone else's file\n";
  const auto link = dir.path() / "rank-1.log";
  std::filesystem::create_symlink(secret, link);
  const LogTail tail = read_log_tail(link.string(), 4096);
  EXPECT_FALSE(tail.readable);
  EXPECT_EQ(tail.text, "");
}

}  // namespace
}  // namespace trainyard::agent
