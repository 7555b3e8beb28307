#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <gtest/gtest.h>

#include "agent/process_registry.h"
#include "tests/support/temp_dir.h"

namespace trainyard::agent {
namespace {

TEST(ProcessRegistry, ParsesOnlyWellFormedRecords) {
  const auto ok = parse_recorded_group("42 123456\n");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->attempt_id, 42);
  EXPECT_EQ(ok->start_time, 123456u);
  EXPECT_FALSE(parse_recorded_group(""));
  EXPECT_FALSE(parse_recorded_group("42"));
  EXPECT_FALSE(parse_recorded_group("42 123 extra"));
  EXPECT_FALSE(parse_recorded_group("-1 5"));
  EXPECT_FALSE(parse_recorded_group("x y"));
}

TEST(ProcessRegistry, StartTimeOfALiveProcessAndNoneForAMissingOne) {
  EXPECT_TRUE(process_start_time(::getpid()));
  EXPECT_FALSE(process_start_time(0x3fffffff));
}

// A forked child in its own group, standing in for a job a killed agent left behind.
pid_t spawn_group_leader() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::pause();
    ::_exit(0);
  }
  ::setpgid(pid, pid);
  return pid;
}

// Waits on the child's pidfd (readable once it has exited) rather than polling waitpid.
bool reaped_within(pid_t pid, std::chrono::seconds deadline) {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return false;
  pollfd exited{fd, POLLIN, 0};
  const int ready = ::poll(&exited, 1, static_cast<int>(std::chrono::milliseconds(deadline).count()));
  ::close(fd);
  int status = 0;
  return ready == 1 && ::waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

TEST(ProcessRegistry, ARestartedAgentKillsTheGroupsItsPreviousLifeRecorded) {
  TempDir dir;
  const pid_t leftover = spawn_group_leader();
  {
    ProcessRegistry previous_life((dir.path() / "processes").string());
    previous_life.record(leftover, 17);
  }
  ProcessRegistry restarted((dir.path() / "processes").string());
  EXPECT_EQ(restarted.kill_leftovers(), 1);
  EXPECT_TRUE(reaped_within(leftover, std::chrono::seconds(10)));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path() / "processes"));
}

TEST(ProcessRegistry, ARecycledPidIsNotKilledAndCorruptRecordsAreDropped) {
  TempDir dir;
  const auto records = dir.path() / "processes";
  const pid_t unrelated = spawn_group_leader();
  ProcessRegistry registry(records.string());
  // The recorded start time is not the live process's: the pid was reused by something else.
  std::ofstream(records / std::to_string(unrelated)) << "17 1\n";
  std::ofstream(records / "not-a-pid") << "17 1\n";
  std::ofstream(records / "12345") << "garbage";
  EXPECT_EQ(registry.kill_leftovers(), 0);
  EXPECT_TRUE(process_start_time(unrelated));
  EXPECT_TRUE(std::filesystem::is_empty(records));
  ::kill(unrelated, SIGKILL);
  EXPECT_TRUE(reaped_within(unrelated, std::chrono::seconds(10)));
}

TEST(ProcessRegistry, AForgottenGroupIsLeftAlone) {
  TempDir dir;
  const pid_t finished = spawn_group_leader();
  ProcessRegistry registry((dir.path() / "processes").string());
  registry.record(finished, 3);
  registry.forget(finished);
  EXPECT_EQ(registry.kill_leftovers(), 0);
  EXPECT_TRUE(process_start_time(finished));
  ::kill(finished, SIGKILL);
  EXPECT_TRUE(reaped_within(finished, std::chrono::seconds(10)));
}

TEST(ProcessRegistry, ThousandsOfAttemptsKeepOneShortJournalAndTheLiveGroupStaysRecorded) {
  TempDir dir;
  const auto records = dir.path() / "processes";
  const pid_t leader = spawn_group_leader();
  {
    ProcessRegistry registry(records.string());
    for (int attempt = 1; attempt <= 3000; ++attempt) {
      registry.record(leader, attempt);
      registry.forget(leader);
    }
    registry.record(leader, 3001);
  }
  // 6,001 lines of about 25 bytes unless rewritten; no file per group.
  EXPECT_LT(std::filesystem::file_size(records / "journal"), 40u * 1024);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(records), std::filesystem::directory_iterator()), 1);
  ProcessRegistry restarted(records.string());
  EXPECT_EQ(restarted.kill_leftovers(), 1);
  EXPECT_TRUE(reaped_within(leader, std::chrono::seconds(10)));
  EXPECT_TRUE(std::filesystem::is_empty(records));
}

TEST(ProcessRegistry, ARewriteKeepsTheGroupsAPreviousLifeLeftWhenTheyWereNotYetKilled) {
  TempDir dir;
  const auto records = dir.path() / "processes";
  const pid_t leftover = spawn_group_leader();
  const pid_t churn = spawn_group_leader();
  ProcessRegistry(records.string()).record(leftover, 7);
  {
    ProcessRegistry next_life(records.string());
    for (int attempt = 1; attempt <= 2000; ++attempt) {
      next_life.record(churn, attempt);
      next_life.forget(churn);
    }
  }
  EXPECT_EQ(ProcessRegistry(records.string()).kill_leftovers(), 1);
  EXPECT_TRUE(reaped_within(leftover, std::chrono::seconds(10)));
  EXPECT_TRUE(process_start_time(churn));  // ended in its journal: left alone
  ::kill(churn, SIGKILL);
  EXPECT_TRUE(reaped_within(churn, std::chrono::seconds(10)));
}

TEST(ProcessRegistry, DamagedJournalLinesAreDroppedAndARecycledPidInTheJournalIsNotKilled) {
  TempDir dir;
  const auto records = dir.path() / "processes";
  std::filesystem::create_directories(records);
  const pid_t unrelated = spawn_group_leader();
  std::ofstream(records / "journal") << "start " << unrelated << " 17 1\n"  // another start time
                                     << "start 1 17 5\nstart x 17 5\nend\nend 99 extra\n\x1b[31mred\nstart 4242 17";
  ProcessRegistry registry(records.string());
  EXPECT_EQ(registry.kill_leftovers(), 0);
  EXPECT_TRUE(process_start_time(unrelated));
  EXPECT_TRUE(std::filesystem::is_empty(records));
  ::kill(unrelated, SIGKILL);
  EXPECT_TRUE(reaped_within(unrelated, std::chrono::seconds(10)));
}

}  // namespace
}  // namespace trainyard::agent
