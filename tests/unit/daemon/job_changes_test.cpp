// A job's state change (daemon/job_changes.h) moves it along its table and hands the caller's
// store change its record and the event of the state it entered, or refuses a pair outside the table.
#include "daemon/job_changes.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace trainyard::daemon {
namespace {

Job pending_job() {
  Job job;
  job.id = 7;
  job.user = "alice";
  job.spec.name = "train";
  job.spec.share = "research";
  job.state = JobState::pending;
  job.reason = "queued";
  return job;
}

const TimePoint kAt = TimePoint(std::chrono::seconds(1'800'000'000));

TEST(JobChanges, AFinalStateEndsTheJobAndStoresItsRecordAndEvent) {
  Job job = pending_job();
  store::Change change;
  const auto taken = change_job_state(job, {.event = JobEvent::cancelled, .at = kAt, .reason = "cancelled while pending",
                                            .message = "job 7 cancelled while pending", .details = {{"reason", "r"}}},
                                      change);
  EXPECT_EQ(taken.event_type, "job.cancelled");
  EXPECT_EQ(job.state, JobState::cancelled);
  EXPECT_EQ(job.ended_at, kAt);
  ASSERT_EQ(change.jobs.size(), 1u);
  EXPECT_EQ(change.jobs[0].state, JobState::cancelled);
  EXPECT_EQ(change.jobs[0].reason, "cancelled while pending");
  ASSERT_EQ(change.events.size(), 1u);
  EXPECT_EQ(change.events[0].kind, "job.cancelled");
  EXPECT_EQ(change.events[0].job_id, 7);
  EXPECT_EQ(change.events[0].user, "alice");
  EXPECT_EQ(change.events[0].message, "job 7 cancelled while pending");
  EXPECT_EQ(change.events[0].at, kAt);
}

TEST(JobChanges, APlacementStoresTheJobWithoutAnEventOfItsOwnAndDoesNotEndIt) {
  Job job = pending_job();
  store::Change change;
  change_job_state(job, {.event = JobEvent::placed, .at = kAt, .reason = "placed on n1"}, change);
  EXPECT_EQ(job.state, JobState::starting);
  EXPECT_FALSE(job.ended_at.has_value());
  ASSERT_EQ(change.jobs.size(), 1u);
  EXPECT_EQ(change.jobs[0].reason, "placed on n1");
  EXPECT_TRUE(change.events.empty());
}

TEST(JobChanges, APairOutsideTheTableChangesNothing) {
  Job job = pending_job();
  store::Change change;
  EXPECT_THROW(change_job_state(job, {.event = JobEvent::succeeded, .at = kAt, .reason = "done"}, change), std::logic_error);
  EXPECT_EQ(job.state, JobState::pending);
  EXPECT_EQ(job.reason, "queued");
  EXPECT_TRUE(change.jobs.empty());
  EXPECT_TRUE(change.events.empty());
}

}  // namespace
}  // namespace trainyard::daemon
