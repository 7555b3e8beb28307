#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "agent/job_python.h"
#include "agent/process_snapshot.h"
#include "agent/rank_activity.h"

namespace trainyard::agent {
namespace {

using namespace std::chrono_literals;

MonoTime at(Millis t) { return MonoTime(t); }

TEST(ActivityMeter, TheFirstLookCountsAsActiveThenIdleGrows) {
  ActivityMeter meter;
  EXPECT_TRUE(meter.look(at(1000ms), {{10, 1, 0, 0}}, 0, 0));
  EXPECT_FALSE(meter.look(at(2000ms), {{10, 1, 0, 0}}, 0, 0));
  EXPECT_EQ(meter.idle(at(5000ms)), 4000ms);
}

TEST(ActivityMeter, OutputIoAndANewProcessAreActivity) {
  ActivityMeter meter;
  meter.look(at(0ms), {{10, 1, 0, 0}}, 100, 0);
  EXPECT_TRUE(meter.look(at(1000ms), {{10, 1, 0, 0}}, 101, 0));               // a line of output
  EXPECT_TRUE(meter.look(at(2000ms), {{10, 1, 0, 4096}}, 101, 0));            // a read or a write
  EXPECT_TRUE(meter.look(at(3000ms), {{10, 1, 0, 4096}, {11, 5, 0, 0}}, 101, 0));  // a data loader started
  EXPECT_TRUE(meter.look(at(4000ms), {{10, 2, 0, 0}}, 101, 0));               // pid 10 is another process now
  EXPECT_FALSE(meter.look(at(5000ms), {{10, 2, 0, 0}}, 101, 0));              // what ended is no activity
  EXPECT_EQ(meter.idle(at(6000ms)), 2000ms);
}

TEST(ActivityMeter, CpuCountsFromFivePerCentOfOneCpuOverFiveSeconds) {
  ActivityMeter meter;
  meter.look(at(0ms), {{10, 1, 0, 0}, {11, 1, 0, 0}}, 0, 0);
  // A waiting PyTorch process: one 10 ms clock tick every 2 s, seen by looks 100 ms apart.
  std::int64_t cpu = 0;
  for (int look = 1; look <= 100; ++look) {
    if (look % 20 == 0) cpu += 10;
    EXPECT_FALSE(meter.look(at(Millis(look * 100)), {{10, 1, cpu, 0}, {11, 1, 0, 0}}, 0, 0)) << "look " << look;
  }
  // Work, spread over two processes: 150 + 150 ms in the next 5 s.
  bool busy = false;
  for (int look = 101; look <= 150; ++look) {
    busy = meter.look(at(Millis(look * 100)), {{10, 1, cpu + (look - 100) * 3, 0}, {11, 1, (look - 100) * 3, 0}}, 0, 0);
  }
  EXPECT_TRUE(busy);
}

TEST(ActivityMeter, TheStackDumpsTheAgentAskedForAreNotTheJobsWork) {
  ActivityMeter meter;
  meter.look(at(0ms), {{10, 1, 0, 0}}, 0, 0);
  EXPECT_FALSE(meter.look(at(1000ms), {{10, 1, 0, 900}}, 0, 900));
  EXPECT_TRUE(meter.look(at(2000ms), {{10, 1, 0, 1900}}, 0, 1000));
}

class RankActivityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("rank-activity-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    install_job_python((dir_ / "python").string());
  }
  void TearDown() override {
    if (child_ > 0) {
      ::kill(child_, SIGKILL);
      ::waitpid(child_, nullptr, 0);
    }
    std::filesystem::remove_all(dir_);
  }
  // A Python process with the jobs' sitecustomize, as the agent starts a command rank.
  void start_python(const std::string& code) {
    const std::string python_path = "PYTHONPATH=" + (dir_ / "python").string();
    const std::string stacks = "TRAINYARD_STACKS_FILE=" + stacks_file();
    const std::string signal = "TRAINYARD_STACKS_SIGNAL=" + std::to_string(stacks_signal());
    child_ = ::fork();
    ASSERT_GE(child_, 0);
    if (child_ == 0) {
      char* envp[] = {const_cast<char*>(python_path.c_str()), const_cast<char*>(stacks.c_str()),
                      const_cast<char*>(signal.c_str()), nullptr};
      ::execle("/usr/bin/python3", "python3", "-c", code.c_str(), static_cast<char*>(nullptr), envp);
      ::_exit(127);
    }
  }
  std::string stacks_file() const { return (dir_ / "rank-0.stacks").string(); }
  // Where the child, as RANK `rank`, is said to be once idle for 10 s (the look that asks for stacks).
  std::vector<ProcessWhere> where_once_idle(int rank) {
    RankActivity activity(stacks_signal());
    const std::vector<RankLeader> leaders = {{child_, rank, stacks_file()}};
    AttemptReport report;
    activity.look(at(0ms), {child_}, leaders, 0, report);
    activity.look(at(10'000ms), {child_}, leaders, 0, report);
    return report.where;
  }
  template <typename Done>
  static bool eventually(Done done) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(20ms);  // the polling interval of the condition
    }
    return true;
  }

  std::filesystem::path dir_;
  pid_t child_ = -1;
};

TEST_F(RankActivityTest, AnIdlePythonRankIsAskedForItsStackOnceAndSaysWhereItIs) {
  start_python("import time\ndef wait_here():\n    time.sleep(600)\nwait_here()\n");
  // Ready once its sitecustomize has registered the stack dump.
  ASSERT_TRUE(eventually([&] {
    const auto s = snapshot_process(child_);
    return s && s->catches(stacks_signal()) && s->stat.state == 'S';
  }));
  RankActivity activity(stacks_signal());
  const std::vector<RankLeader> leaders = {{child_, 0, stacks_file()}};
  AttemptReport report;
  activity.look(at(0ms), {child_}, leaders, 0, report);
  EXPECT_EQ(report.idle_ms, 0);
  EXPECT_TRUE(report.where.empty());
  activity.look(at(11'000ms), {child_}, leaders, 0, report);
  EXPECT_EQ(report.idle_ms, 11'000);
  // faulthandler writes a line at a time: the dump is whole once its module frame is there.
  ASSERT_TRUE(eventually([&] {
    std::ifstream in(stacks_file());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.find("in <module>\n") != std::string::npos;
  }));
  const auto dumped = std::filesystem::file_size(stacks_file());
  AttemptReport later;
  activity.look(at(12'000ms), {child_}, leaders, 0, later);
  ASSERT_EQ(later.where.size(), 1u);
  EXPECT_EQ(later.where[0].pid, child_);
  EXPECT_EQ(later.where[0].state, "S");
  EXPECT_EQ(later.where[0].stack, "<string>:3 in wait_here\n<string>:4 in <module>");
  EXPECT_EQ(later.idle_ms, 12'000) << "its own dump is not activity";
  EXPECT_EQ(std::filesystem::file_size(stacks_file()), dumped) << "asked once an idle spell";
}

TEST_F(RankActivityTest, AStoppedProcessIsNotSignalledAndSaidToBeStopped) {
  start_python("import time\ntime.sleep(600)\n");
  ASSERT_TRUE(eventually([&] {
    const auto s = snapshot_process(child_);
    return s && s->catches(stacks_signal());
  }));
  ::kill(child_, SIGSTOP);
  ASSERT_TRUE(eventually([&] { return snapshot_process(child_)->stat.state == 'T'; }));
  const auto where = where_once_idle(3);
  ASSERT_EQ(where.size(), 1u);
  EXPECT_EQ(where[0].rank, 3);
  EXPECT_EQ(where[0].state, "T");
  EXPECT_EQ(where[0].stack, "");
  EXPECT_FALSE(std::filesystem::exists(stacks_file()) && std::filesystem::file_size(stacks_file()) > 0);
}

TEST_F(RankActivityTest, AProcessThatDoesNotCatchTheSignalIsNeverSentIt) {
  child_ = ::fork();
  ASSERT_GE(child_, 0);
  if (child_ == 0) {
    ::execl("/bin/sleep", "sleep", "600", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ASSERT_TRUE(eventually([&] {
    const auto s = snapshot_process(child_);
    return s && s->stat.state == 'S';
  }));
  const auto where = where_once_idle(0);
  ASSERT_EQ(where.size(), 1u);
  EXPECT_EQ(where[0].state, "S") << "alive: the real-time signal would have ended it";
}

}  // namespace
}  // namespace trainyard::agent
