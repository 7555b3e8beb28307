#include <gtest/gtest.h>

#include "daemon/telemetry/job_accounting.h"
#include "tests/unit/daemon/seconds_clock.h"

namespace trainyard::daemon {
namespace {

using testing::at_s;

Job job_submitted_at(double s, int nodes, std::optional<int> cores_per_node) {
  Job j;
  j.id = 1;
  j.submitted_at = at_s(s);
  j.spec.nodes = nodes;
  j.spec.cores_per_node = cores_per_node;
  return j;
}

Attempt ran(double from, double to, int nodes, int cores_per_node) {
  Attempt a;
  a.nodes = std::vector<std::string>(nodes, "n");
  a.cores_per_node = cores_per_node;
  a.state = AttemptState::succeeded;
  a.created_at = at_s(from);
  a.launched_at = at_s(from);
  a.started_at = at_s(from);
  a.ended_at = at_s(to);
  return a;
}

TEST(JobAccounting, AFinishedJobWaitedRanAndHeldItsCores) {
  Job job = job_submitted_at(0, 2, 4);
  job.started_at = at_s(60);
  job.ended_at = at_s(60 + 1800);
  const std::vector<Attempt> attempts = {ran(60, 60 + 1800, 2, 4)};
  const JobAccounting a = job_accounting(job, attempts, at_s(99'999));
  EXPECT_DOUBLE_EQ(a.wait_s, 60);
  ASSERT_TRUE(a.elapsed_s);
  EXPECT_DOUBLE_EQ(*a.elapsed_s, 1800);
  EXPECT_EQ(a.nodes, 2);
  EXPECT_EQ(a.cores, 8);
  EXPECT_DOUBLE_EQ(a.core_hours, 4.0);  // 8 cores for half an hour
}

TEST(JobAccounting, APendingJobHasWaitedUntilNowAndNotRun) {
  const Job job = job_submitted_at(10, 1, std::nullopt);
  const JobAccounting a = job_accounting(job, {}, at_s(25));
  EXPECT_DOUBLE_EQ(a.wait_s, 15);
  EXPECT_FALSE(a.elapsed_s);
  EXPECT_FALSE(a.cores);  // whole nodes, none given yet
  EXPECT_DOUBLE_EQ(a.core_hours, 0);
}

TEST(JobAccounting, AJobCancelledBeforeItStartedWaitedUntilItsEnd) {
  Job job = job_submitted_at(0, 1, 2);
  job.ended_at = at_s(40);
  EXPECT_DOUBLE_EQ(job_accounting(job, {}, at_s(1000)).wait_s, 40);
}

TEST(JobAccounting, AWholeNodeJobCountsTheCoresItsNewestAttemptGot) {
  Job job = job_submitted_at(0, 2, std::nullopt);
  job.started_at = at_s(0);
  const std::vector<Attempt> attempts = {ran(0, 3600, 2, 16)};
  const JobAccounting a = job_accounting(job, attempts, at_s(3600));
  EXPECT_EQ(a.cores, 32);
  EXPECT_DOUBLE_EQ(*a.elapsed_s, 3600);  // still running: up to now
  EXPECT_DOUBLE_EQ(a.core_hours, 32);
}

// A job array's history row: three tasks submitted together at 0.
Job task_of_array(JobId id, std::optional<double> started, std::optional<double> ended) {
  Job j = job_submitted_at(0, 1, 4);
  j.id = id;
  if (started) j.started_at = at_s(*started);
  if (ended) j.ended_at = at_s(*ended);
  return j;
}

TEST(ArrayAccounting, SumsTheTasksUseAndSpansFirstStartToLastEnd) {
  // Task 11 retried once: both its attempts count.
  const std::vector<Job> tasks = {task_of_array(10, 30, 130), task_of_array(11, 40, 400), task_of_array(12, 200, 260)};
  std::map<JobId, std::vector<Attempt>> attempts;
  attempts[10] = {ran(30, 130, 1, 4)};
  attempts[11] = {ran(40, 100, 1, 4), ran(100, 400, 1, 4)};
  attempts[12] = {ran(200, 260, 1, 4)};
  const JobAccounting a = array_accounting(tasks, attempts, at_s(99'999));
  ASSERT_TRUE(a.elapsed_s);
  EXPECT_DOUBLE_EQ(*a.elapsed_s, 400 - 30);
  EXPECT_DOUBLE_EQ(a.wait_s, 30) << "until the first task started";
  EXPECT_EQ(a.nodes, 1);
  EXPECT_EQ(a.cores, 4) << "one task's shape";
  EXPECT_DOUBLE_EQ(a.goodput.allocated_core_s, 4 * (100 + 60 + 300 + 60));
  EXPECT_DOUBLE_EQ(a.core_hours, 4 * 520 / 3600.0);
  Goodput summed;
  for (const Job& t : tasks) summed += job_accounting(t, attempts[t.id], at_s(99'999)).goodput;
  EXPECT_DOUBLE_EQ(a.goodput.productive_core_s, summed.productive_core_s);
  EXPECT_DOUBLE_EQ(a.goodput.ratio(), summed.ratio());
}

TEST(ArrayAccounting, WhileATaskHasNotEndedTheArrayRunsUntilNow) {
  const std::vector<Job> tasks = {task_of_array(10, 30, 130), task_of_array(11, std::nullopt, std::nullopt)};
  std::map<JobId, std::vector<Attempt>> attempts;
  attempts[10] = {ran(30, 130, 1, 4)};
  const JobAccounting a = array_accounting(tasks, attempts, at_s(500));
  EXPECT_DOUBLE_EQ(*a.elapsed_s, 500 - 30);
  EXPECT_DOUBLE_EQ(a.wait_s, 30);
  EXPECT_DOUBLE_EQ(a.core_hours, 4 * 100 / 3600.0);
}

TEST(ArrayAccounting, AnArrayCancelledBeforeAnyTaskStartedWaitedUntilItsLastEnd) {
  const std::vector<Job> tasks = {task_of_array(10, std::nullopt, 50), task_of_array(11, std::nullopt, 70)};
  const JobAccounting a = array_accounting(tasks, {}, at_s(1000));
  EXPECT_FALSE(a.elapsed_s);
  EXPECT_DOUBLE_EQ(a.wait_s, 70);
  EXPECT_DOUBLE_EQ(a.core_hours, 0);
  EXPECT_EQ(a.cores, 4);
}

}  // namespace
}  // namespace trainyard::daemon
