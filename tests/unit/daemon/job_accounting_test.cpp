#include <gtest/gtest.h>

#include "daemon/job_accounting.h"

namespace trainyard::daemon {
namespace {

TimePoint at_s(double s) { return from_unix_ms(1'800'000'000'000 + static_cast<std::int64_t>(s * 1000)); }

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

}  // namespace
}  // namespace trainyard::daemon
