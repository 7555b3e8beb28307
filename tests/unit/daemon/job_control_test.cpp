// Hold, release, requeue and update on the job manager, without sockets or real
// time: a held job is never placed, a requeued attempt is neither a failure nor a retry and the
// next attempt resumes from the checkpoint the stop wrote, and an update re-queues the new shape.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "checkpoint/checkpoint.h"
#include "tests/unit/daemon/job_manager_helpers.h"

namespace trainyard::daemon::testing {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Outcome = JobManager::ControlOutcome;
using ControlResult = JobManager::ControlResult;

// Runs one control call to its answer.
template <typename Call>
Outcome control(Cluster& c, Call call) {
  std::optional<Outcome> outcome;
  call([&outcome](Outcome o) { outcome = std::move(o); });
  c.settle();
  EXPECT_TRUE(outcome) << "never answered";
  return outcome.value_or(Outcome{ControlResult::not_active, std::nullopt, "unanswered"});
}

JobSpec checkpointing_spec(int attempts = 1) {
  JobSpec spec = command_spec(1, attempts);
  spec.kind = JobKind::simulated;
  spec.workload.checkpoint_every = 10;
  return spec;
}

TEST(JobHold, AJobSubmittedHeldIsNeverPlacedUntilReleased) {
  Cluster c;
  c.connect("n1");
  JobSpec spec = command_spec(1);
  spec.hold = true;
  const Job job = c.submit(spec);
  EXPECT_EQ(job.held, Hold::owner);
  EXPECT_EQ(job.reason, "held by its owner");
  c.advance(Millis(1000));
  c.heartbeat("n1");
  c.jobs.tick();
  c.settle();
  EXPECT_TRUE(c.launches().empty()) << "a held job was placed";
  EXPECT_EQ(c.stored_job(job.id)->state, JobState::pending);

  const Outcome released = control(c, [&](auto done) { c.jobs.release(job.id, Hold::owner, done); });
  ASSERT_EQ(released.result, ControlResult::done) << released.why;
  EXPECT_EQ(c.stored_job(job.id)->held, Hold::none);
  EXPECT_EQ(c.launches().size(), 1u) << "a released job was not placed";
}

TEST(JobHold, AnAdminsHoldIsReleasedOnlyByAnAdminAndARunningJobIsNotHeld) {
  Cluster c;
  const Job job = c.submit([] {
    JobSpec spec = command_spec(1);
    spec.wait_for_capacity = true;
    return spec;
  }());
  EXPECT_EQ(control(c, [&](auto done) { c.jobs.hold(job.id, Hold::admin, done); }).result, ControlResult::done);
  // The owner holding it again does not make the hold theirs.
  EXPECT_EQ(control(c, [&](auto done) { c.jobs.hold(job.id, Hold::owner, done); }).job->held, Hold::admin);
  const Outcome by_owner = control(c, [&](auto done) { c.jobs.release(job.id, Hold::owner, done); });
  EXPECT_EQ(by_owner.result, ControlResult::forbidden);
  EXPECT_EQ(c.stored_job(job.id)->held, Hold::admin);
  EXPECT_EQ(control(c, [&](auto done) { c.jobs.release(job.id, Hold::admin, done); }).result, ControlResult::done);
  EXPECT_EQ(control(c, [&](auto done) { c.jobs.release(job.id, Hold::admin, done); }).result,
            ControlResult::wrong_state)
      << "released twice";

  c.connect("n1");
  ASSERT_EQ(c.launches().size(), 1u);
  const Outcome running = control(c, [&](auto done) { c.jobs.hold(job.id, Hold::admin, done); });
  EXPECT_EQ(running.result, ControlResult::wrong_state);
  EXPECT_THAT(running.why, HasSubstr("only a pending job"));
}

TEST(JobRequeue, ASimulatedJobCheckpointsStopsAndResumesWithoutUsingAnAttempt) {
  Cluster c;
  c.connect("n1");
  const Job job = c.submit(checkpointing_spec(1));  // one attempt only: a requeue must not use it
  const LaunchMsg first = c.agents["n1"]->launches().at(0);
  c.started("n1", first.attempt_id);
  report_checkpoint(c, "n1", first, 10);

  const Outcome asked = control(c, [&](auto done) { c.jobs.requeue_running(job.id, done); });
  ASSERT_EQ(asked.result, ControlResult::done) << asked.why;
  EXPECT_EQ(c.stored_job(job.id)->stopping_to, StopIntent::requeue) << "acted on before it was stored";
  const auto kills = c.agents["n1"]->kills();
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_TRUE(kills[0].checkpoint) << "a simulated job saves before it stops";

  report_checkpoint(c, "n1", first, 17);  // what the stop wrote
  c.exited("n1", first.attempt_id, std::nullopt, 15, "requeued on request (stopped at step 17)");
  const auto attempts = c.stored_attempts(job.id);
  ASSERT_FALSE(attempts.empty());
  EXPECT_EQ(attempts[0].state, AttemptState::requeued);
  EXPECT_EQ(attempts[0].failure_class, "");
  Job stored = *c.stored_job(job.id);
  EXPECT_EQ(stored.requeues, 1);
  EXPECT_EQ(stored.stopping_to, StopIntent::none);

  const auto launches = c.agents["n1"]->launches();
  ASSERT_EQ(launches.size(), 2u) << "not queued again at once (no retry backoff)";
  EXPECT_EQ(launches[1].attempt_number, 2);
  ASSERT_TRUE(launches[1].resume_from);
  EXPECT_EQ(checkpoint::step_of(*launches[1].resume_from), 17) << "not resumed from the checkpoint the stop wrote";
  stored = *c.stored_job(job.id);
  EXPECT_EQ(stored.attempts, 1) << "the requeue used one of the job's attempts";
}

TEST(JobRequeue, ACommandJobGetsAPlainStopAndOnlyARunningJobIsRequeued) {
  Cluster c;
  c.connect("n1");
  const Job job = c.submit(command_spec(1));
  const AttemptId attempt = c.agents["n1"]->launches().at(0).attempt_id;
  c.started("n1", attempt);
  ASSERT_EQ(control(c, [&](auto done) { c.jobs.requeue_running(job.id, done); }).result, ControlResult::done);
  ASSERT_EQ(c.agents["n1"]->kills().size(), 1u);
  EXPECT_FALSE(c.agents["n1"]->kills()[0].checkpoint) << "a command on a requeue gets SIGTERM, as on a cancel";
  EXPECT_EQ(control(c, [&](auto done) { c.jobs.requeue_running(job.id, done); }).result, ControlResult::wrong_state)
      << "requeued twice while stopping";
  c.exited("n1", attempt, std::nullopt, 15);
  EXPECT_EQ(c.stored_attempts(job.id).at(0).state, AttemptState::requeued);
  c.heartbeat("n1");
  c.settle();
  EXPECT_EQ(c.agents["n1"]->launches().size(), 2u);
}

TEST(JobRequeue, ACancelWhileStoppingWins) {
  Cluster c;
  c.connect("n1");
  const Job job = c.submit(checkpointing_spec());
  const AttemptId attempt = c.agents["n1"]->launches().at(0).attempt_id;
  c.started("n1", attempt);
  control(c, [&](auto done) { c.jobs.requeue_running(job.id, done); });
  c.jobs.cancel(job.id, [](JobManager::CancelResult, std::optional<Job>) {});
  c.settle();
  c.exited("n1", attempt, std::nullopt, 15);
  EXPECT_EQ(c.stored_job(job.id)->state, JobState::cancelled);
  EXPECT_EQ(c.stored_attempts(job.id).at(0).state, AttemptState::cancelled);
}

TEST(JobUpdate, APendingJobTakesItsNewShapeAndAnImpossibleOneIsRefused) {
  Cluster c;
  c.connect("n1");
  c.connect("n2");
  JobSpec spec = command_spec(3);  // waits: two nodes only
  spec.wait_for_capacity = true;
  const Job job = c.submit(spec);
  EXPECT_TRUE(c.launches().empty());

  JobSpec too_big = job.spec;
  too_big.nodes = 9;
  too_big.wait_for_capacity = false;
  const Outcome refused = control(c, [&](auto done) { c.jobs.update(job.id, too_big, done); });
  EXPECT_EQ(refused.result, ControlResult::invalid);
  EXPECT_EQ(refused.field, "nodes");
  EXPECT_THAT(refused.why, ::testing::HasSubstr("9 nodes asked")) << "as a submission would be refused";

  JobSpec smaller = job.spec;
  smaller.nodes = 2;
  smaller.priority = 5;
  const Outcome updated = control(c, [&](auto done) { c.jobs.update(job.id, smaller, done); });
  ASSERT_EQ(updated.result, ControlResult::done) << updated.why;
  EXPECT_EQ(c.stored_job(job.id)->spec.nodes, 2);
  EXPECT_EQ(c.stored_job(job.id)->spec.priority, 5);
  EXPECT_EQ(c.launches().size(), 2u) << "not placed in its new shape";
  EXPECT_EQ(control(c, [&](auto done) { c.jobs.update(job.id, smaller, done); }).result, ControlResult::wrong_state);
}

}  // namespace
}  // namespace trainyard::daemon::testing
