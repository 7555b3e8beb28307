// Checkpoint writes that fail, as the job manager hears of them from fake agents: the attempt's
// first failure is a job.checkpoint_failed event, every failure updates the count and last error on
// the stored attempt, and what a rank reports reaches people bounded and without control characters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/daemon/job_manager_helpers.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

AttemptReport failing(const RunningJob& r, std::int64_t failures, std::string error) {
  AttemptReport report{r.attempt, r.job.id, 40, std::nullopt, "forward"};
  report.checkpoint_failures = {failures, std::move(error)};
  return report;
}

TEST(CheckpointFailures, TheFirstIsAnEventAndEveryOneIsCountedOnTheAttempt) {
  Cluster c;
  connect_nodes(c, 2);
  const RunningJob r = start_job(c, command_spec(2));
  c.heartbeat(r.nodes[0], {AttemptReport{r.attempt, r.job.id, 20, std::nullopt, "forward"}});
  EXPECT_TRUE(c.events_of_kind("job.checkpoint_failed").empty()) << "no failure, no event";
  EXPECT_EQ(c.stored_attempts(r.job.id)[0].checkpoint_failures.count, 0);

  c.heartbeat(r.nodes[0], {failing(r, 1, "open /ckpt/7/step-20: Permission denied")});
  const auto events = c.events_of_kind("job.checkpoint_failed");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].severity, store::Severity::warning);
  EXPECT_EQ(events[0].node, r.nodes[0]);
  EXPECT_EQ(events[0].attempt_id, r.attempt);
  EXPECT_EQ(events[0].details["rank"], 0);
  EXPECT_EQ(events[0].details["error"], "open /ckpt/7/step-20: Permission denied");
  EXPECT_THAT(events[0].message, HasSubstr("could not write a checkpoint on " + r.nodes[0] + " (rank 0)"));
  EXPECT_THAT(events[0].message,
              HasSubstr("a retry would resume from an earlier attempt's checkpoint, or from step 0"));

  // Later failures, and the same count heard again, update the attempt without another event.
  c.heartbeat(r.nodes[0], {failing(r, 3, "write /ckpt/7/step-60: No space left on device")});
  c.heartbeat(r.nodes[0], {failing(r, 3, "write /ckpt/7/step-60: No space left on device")});
  c.heartbeat(r.nodes[1], {failing(r, 2, "an older report from another rank")});
  EXPECT_EQ(c.events_of_kind("job.checkpoint_failed").size(), 1u);
  const Attempt stored = c.stored_attempts(r.job.id)[0];
  EXPECT_EQ(stored.checkpoint_failures.count, 3);
  EXPECT_EQ(stored.checkpoint_failures.last_error, "write /ckpt/7/step-60: No space left on device");
}

TEST(CheckpointFailures, AFailureReportedOnlyInTheExitIsCountedToo) {
  Cluster c;
  connect_nodes(c, 1);
  const RunningJob r = start_job(c, command_spec(1));
  AttemptExitedMsg exit;
  exit.attempt_id = r.attempt;
  exit.exit_code = 0;
  exit.checkpoint_failures = {2, "disk full"};
  c.send(r.nodes[0], exit);
  ASSERT_EQ(c.stored_job(r.job.id)->state, JobState::succeeded);
  EXPECT_EQ(c.stored_attempts(r.job.id)[0].checkpoint_failures, (CheckpointFailures{2, "disk full"}));
  EXPECT_EQ(c.events_of_kind("job.checkpoint_failed").size(), 1u);
}

TEST(CheckpointFailures, AnErrorFullOfEscapeCodesIsShownWithoutThemAndBounded) {
  Cluster c;
  connect_nodes(c, 1);
  const RunningJob r = start_job(c, command_spec(1));
  c.heartbeat(r.nodes[0], {failing(r, 1, "\x1b[2J\x1b]0;owned\x07open /ckpt\n: " + std::string(2000, 'x'))});
  const std::string error = c.stored_attempts(r.job.id)[0].checkpoint_failures.last_error;
  EXPECT_EQ(error.find('\x1b'), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_LE(error.size(), 310u);
  const auto events = c.events_of_kind("job.checkpoint_failed");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].message.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace trainyard::daemon::testing
