// Array %K limits and dependency verdicts: pure, no I/O, no clock.
#include <gtest/gtest.h>

#include "scheduler/dependencies.h"
#include "scheduler_fixtures.h"

namespace trainyard::scheduler {
namespace {

using namespace fixtures;

PendingJob task(JobId id, JobId array, int limit) {
  PendingJob p = job(id, {});
  p.array = ArrayLimit{array, limit};
  return p;
}

TEST(ArrayLimit, StartsNoMoreThanKTasksAndTheNextAsOneEnds) {
  Scheduler s{Config{}};
  s.upsert_node(node("a", 64));
  for (JobId id = 10; id < 30; ++id) s.queue(task(id, 10, 3));
  EXPECT_EQ(started(s.schedule(at_s(0))), (std::vector<JobId>{10, 11, 12}));
  EXPECT_TRUE(started(s.schedule(at_s(1))).empty());
  const auto reason = s.why_pending(13);
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->code, ReasonCode::array_limit);
  EXPECT_EQ(reason->message, "array 10 runs at most 3 tasks at once (%3), and 3 are queued or running");
  EXPECT_FALSE(s.queue_position(13));
  Scheduler one_at_a_time{Config{}};
  one_at_a_time.upsert_node(node("a", 64));
  for (JobId id = 40; id < 42; ++id) one_at_a_time.queue(task(id, 40, 1));
  EXPECT_EQ(started(one_at_a_time.schedule(at_s(0))), (std::vector<JobId>{40}));
  EXPECT_EQ(one_at_a_time.why_pending(41)->message, "array 40 runs at most 1 task at once (%1), and 1 is queued or running");

  s.finish(11, at_s(2));
  EXPECT_EQ(started(s.schedule(at_s(2))), (std::vector<JobId>{13}));
  // A task leaving the queue before it ran gives its place too.
  s.finish(10, at_s(3));
  s.finish(12, at_s(3));
  s.finish(13, at_s(3));
  EXPECT_EQ(started(s.schedule(at_s(3))), (std::vector<JobId>{14, 15, 16}));
}

TEST(ArrayLimit, NeverMoreThanKOverALongRunWithRetriesAndCancels) {
  Scheduler s{Config{}};
  s.upsert_node(node("a", 8));
  for (JobId id = 1; id <= 200; ++id) s.queue(task(id, 1, 4));
  std::vector<JobId> running;
  std::size_t max_running = 0;
  int ended = 0;
  for (int t = 0; ended < 200 && t < 10'000; ++t) {
    for (JobId id : started(s.schedule(at_s(t)))) running.push_back(id);
    max_running = std::max(max_running, running.size());
    if (running.empty()) continue;
    const JobId done = running.front();
    running.erase(running.begin());
    s.finish(done, at_s(t));
    if (done % 7 == 0 && t % 2 == 0) {
      s.queue(task(done, 1, 4));  // retried: queued again, waits its turn
    } else {
      ++ended;
    }
    if (t == 50) {
      for (JobId id = 150; id < 160; ++id) {
        if (s.is_pending(id)) {
          s.remove(id);
          ++ended;
        }
      }
    }
  }
  EXPECT_EQ(ended, 200);
  EXPECT_EQ(max_running, 4u);
}

TEST(ArrayLimit, ATaskRunningBeforeARestartHoldsItsPlace) {
  Scheduler s{Config{}};
  s.upsert_node(node("a", 8));
  s.start_running(RunningJob{5, "default", {{"a", 1}}, at_s(0), 3600, ArrayLimit{5, 1}}, at_s(0));
  s.queue(task(6, 5, 1));
  EXPECT_TRUE(started(s.schedule(at_s(1))).empty());
  s.finish(5, at_s(2));
  EXPECT_EQ(started(s.schedule(at_s(2))), (std::vector<JobId>{6}));
}

TEST(ArrayLimit, ADependencyHeldTaskTakesNoPlace) {
  Scheduler s{Config{}};
  s.upsert_node(node("a", 8));
  PendingJob held = task(1, 1, 1);
  held.waiting_for = {99};
  held.dependency_reason = "waiting for job 99 to succeed (afterok)";
  s.queue(held);
  s.queue(task(2, 1, 1));
  EXPECT_EQ(started(s.schedule(at_s(0))), (std::vector<JobId>{2}));
  EXPECT_EQ(s.why_pending(1)->message, "waiting for job 99 to succeed (afterok)");
}

ResolvedDependency on(DependencyCondition c, std::vector<JobState> states) {
  ResolvedDependency r{Dependency{7, c}, {}};
  for (std::size_t i = 0; i < states.size(); ++i) {
    r.jobs.push_back(UpstreamJob{static_cast<JobId>(7 + i), "7_" + std::to_string(i), states[i]});
  }
  return r;
}

DependencyVerdict verdict(DependencyCondition c, std::vector<JobState> states) {
  return check_dependencies({on(c, std::move(states))}).verdict;
}

TEST(Dependencies, EachConditionOverItsJobsStates) {
  using enum JobState;
  using C = DependencyCondition;
  using V = DependencyVerdict;
  EXPECT_EQ(verdict(C::afterok, {succeeded, succeeded}), V::met);
  EXPECT_EQ(verdict(C::afterok, {succeeded, running}), V::waiting);
  EXPECT_EQ(verdict(C::afterok, {running, failed}), V::never);
  EXPECT_EQ(verdict(C::afterok, {cancelled}), V::never);
  EXPECT_EQ(verdict(C::aftercorr, {failed}), V::never);
  EXPECT_EQ(verdict(C::aftercorr, {succeeded}), V::met);
  EXPECT_EQ(verdict(C::afterany, {failed, cancelled, succeeded}), V::met);
  EXPECT_EQ(verdict(C::afterany, {failed, pending}), V::waiting);
  EXPECT_EQ(verdict(C::afternotok, {succeeded, failed}), V::met);
  EXPECT_EQ(verdict(C::afternotok, {cancelled}), V::met);
  EXPECT_EQ(verdict(C::afternotok, {succeeded, starting}), V::waiting);
  EXPECT_EQ(verdict(C::afternotok, {succeeded, succeeded}), V::never);
  EXPECT_EQ(verdict(C::afterok, {}), V::met);
}

TEST(Dependencies, ReasonsNameTheJobWaitedForOrTheOneThatEndedIt) {
  const DependencyCheck waiting =
      check_dependencies({on(DependencyCondition::afterok, {JobState::succeeded, JobState::running, JobState::pending})});
  EXPECT_EQ(waiting.reason, "waiting for job 7_1 and 1 other to succeed (afterok)");
  EXPECT_EQ(waiting.waiting_for, (std::vector<JobId>{8, 9}));
  const DependencyCheck never = check_dependencies(
      {on(DependencyCondition::afterany, {JobState::running}), on(DependencyCondition::afternotok, {JobState::succeeded})});
  EXPECT_EQ(never.verdict, DependencyVerdict::never);
  EXPECT_EQ(never.reason, "dependency afternotok:7 can never be met: job 7_0 SUCCEEDED");
  const DependencyCheck both = check_dependencies(
      {on(DependencyCondition::afterany, {JobState::running}), on(DependencyCondition::afterok, {JobState::pending})});
  EXPECT_EQ(both.reason, "waiting for job 7_0 to end (afterany)");
  EXPECT_EQ(both.waiting_for.size(), 2u);
}

}  // namespace
}  // namespace trainyard::scheduler
