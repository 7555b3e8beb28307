// Checkpoint scans run on the file worker, never on the store worker: a slow or hung checkpoint
// filesystem delays the launches that wait for their scans, never commits, reads or submits.
#include "daemon/file_worker.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

TEST(FileWorkerTest, RunsTasksInOrderOnItsOwnThreadAndPostsTheirCompletions) {
  IoQueue io;
  FileWorker files(io.poster());
  std::vector<int> order;
  std::thread::id ran_on;
  for (int i = 0; i < 3; ++i) {
    files.run(
        [&, i] {
          ran_on = std::this_thread::get_id();
          return FileWorker::Continuation([&order, i] { order.push_back(i); });
        },
        [](const Error& error) { ADD_FAILURE() << error.message; });
  }
  io.run_until([&] { return order.size() == 3; });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  EXPECT_NE(ran_on, std::this_thread::get_id()) << "file work ran on the caller's thread";
}

TEST(FileWorkerTest, ATaskThatThrowsIsReportedAndTheNextStillRuns) {
  IoQueue io;
  FileWorker files(io.poster());
  Error error;
  bool next_ran = false;
  files.run([]() -> FileWorker::Continuation { throw std::runtime_error("disk on fire"); },
            [&error](const Error& e) { error = e; });
  files.run([&] { return FileWorker::Continuation([&] { next_ran = true; }); },
            [](const Error& e) { ADD_FAILURE() << e.message; });
  io.run_until([&] { return next_ran; });
  EXPECT_EQ(error.code, ErrorCode::internal);
  EXPECT_NE(error.message.find("disk on fire"), std::string::npos) << error.message;
}

std::size_t launch_count(const Cluster& c) {
  std::size_t n = 0;
  for (const auto& [node, launches] : c.launches()) n += launches.size();
  return n;
}

TEST(FileWorkerTest, AHungCheckpointScanDelaysOnlyTheLaunchesWaitingForIt) {
  Cluster c;
  c.connect("n1");
  c.connect("n2");
  const Job first = c.submit(command_spec(1, 2));
  const AttemptId attempt = c.stored_attempts(first.id).back().id;
  const std::string node = c.nodes_of(attempt).front();
  c.started(node, attempt);
  c.exited(node, attempt, 1);  // retried after a backoff of 2 s, from a checkpoint if it has one

  // The checkpoint filesystem hangs: every scan queued from now waits behind this task.
  std::promise<void> disk;
  std::shared_future<void> disk_back = disk.get_future().share();
  c.files.run(
      [disk_back] {
        disk_back.wait();
        return FileWorker::Continuation([] {});
      },
      [](const Error& error) { ADD_FAILURE() << error.message; });

  c.clock.advance(Millis(2000));
  c.jobs.tick();
  c.timers.fire_due();  // the scheduling pass places the retry; its checkpoint scan is queued
  c.io.run_until([&] { return c.stored_attempts(first.id).size() == 2; });
  c.io.run_ready();

  std::optional<JobId> second;
  c.jobs.submit(command_spec(1), "bob", [&second](Result<JobManager::Submitted> accepted) {
    ASSERT_TRUE(accepted) << accepted.error().message;
    second = accepted->job.id;
  });
  c.io.run_until([&] { return second.has_value(); });
  EXPECT_TRUE(c.store.committed_job(*second)) << "acknowledged, yet not committed";
  EXPECT_TRUE(c.stored_job(*second)) << "the store could not be read while the disk hung";
  EXPECT_EQ(launch_count(c), 1u) << "launched before its checkpoint scan";

  disk.set_value();
  c.settle();
  EXPECT_EQ(launch_count(c), 3u) << "the retry and the second job launch once their scans finished";
}

}  // namespace
}  // namespace trainyard::daemon::testing
