#include <gtest/gtest.h>
#include <unistd.h>

#include "agent/process_snapshot.h"

namespace trainyard::agent {
namespace {

TEST(ProcessSnapshot, ParsesStatFieldsAfterACommandNameWithSpacesAndParentheses) {
  const std::string line =
      "4242 (python3 (x) y) S 1 4240 4240 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 3 0 987654 1000000 100 "
      "18446744073709551615 1 1 0 0 0 0 0 16781312 16386 0 0 0 17 1 0 0 0 0 0\n";
  const auto stat = parse_process_stat(line);
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->group, 4240);
  EXPECT_EQ(stat->cpu_ticks, 300);
  EXPECT_EQ(stat->start_time, 987654u);
  EXPECT_FALSE(parse_process_stat("4242 (x) S 1 2"));
  EXPECT_FALSE(parse_process_stat("no parenthesis"));
}

TEST(ProcessSnapshot, CountsReadAndWriteBytesAndCaughtSignals) {
  EXPECT_EQ(parse_io_bytes("rchar: 1200\nwchar: 34\nsyscr: 5\nread_bytes: 4096\n"), 1234);
  EXPECT_EQ(parse_io_bytes(""), 0);
  const std::uint64_t mask = parse_caught_signals("SigIgn:\t0000000000001000\nSigCgt:\t0000000400004a02\n");
  EXPECT_EQ(mask, 0x400004a02u);
  ProcessSnapshot snapshot;
  snapshot.caught_signals = mask;
  EXPECT_TRUE(snapshot.catches(2));    // bit 1
  EXPECT_TRUE(snapshot.catches(35));   // bit 34
  EXPECT_TRUE(snapshot.catches(15));   // bit 14
  EXPECT_FALSE(snapshot.catches(3));
  EXPECT_FALSE(snapshot.catches(0));
}

TEST(ProcessSnapshot, SeesThisProcessAndItsGroup) {
  const auto self = snapshot_process(::getpid());
  ASSERT_TRUE(self);
  EXPECT_EQ(self->stat.state, 'R');
  EXPECT_EQ(self->stat.group, ::getpgrp());
  const auto members = processes_in_groups({::getpgrp()});
  EXPECT_NE(std::find(members.begin(), members.end(), ::getpid()), members.end());
  EXPECT_FALSE(snapshot_process(0x3fffffff));
}

}  // namespace
}  // namespace trainyard::agent
