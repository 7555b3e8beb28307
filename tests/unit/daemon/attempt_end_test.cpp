// How an attempt ends, as a pure function: the records and facts in, the records to write and the
// events out; no daemon, no store, no clock.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/attempt_end.h"
#include "proto/exit_reasons.h"

namespace trainyard::daemon {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

const TimePoint kNow = TimePoint{} + 1000s;

struct AttemptEndCase {
  Attempt attempt;
  Job job;
  AttemptEndFacts facts;

  explicit AttemptEndCase(int ranks, int allowed_attempts = 3) {
    job.id = 7;
    job.state = JobState::running;  // an attempt ends while its job runs it
    job.spec.retry.attempts = allowed_attempts;
    job.attempts = 1;
    attempt.id = 70;
    attempt.job_id = 7;
    attempt.state = AttemptState::running;
    for (int r = 0; r < ranks; ++r) {
      attempt.nodes.push_back("n" + std::to_string(r));
      facts.ranks.push_back(RankEnd{false, false, 0, std::nullopt, "", "", 10});
    }
  }
  void rank_fails(int r, int exit_code, std::string reason) {
    facts.ranks[static_cast<std::size_t>(r)].exit_code = exit_code;
    facts.ranks[static_cast<std::size_t>(r)].reason = std::move(reason);
    if (facts.first_failed_rank < 0) facts.first_failed_rank = r;
  }
  void rank_lost(int r) {
    facts.ranks[static_cast<std::size_t>(r)].lost = true;
    rank_fails(r, -1, "node lost");
  }
  AttemptEnd end() const {
    return decide_attempt_end(attempt, job, facts, {FailureRules::defaults(), 2, Millis(2000)}, kNow);
  }
};

TEST(AttemptEnd, ASucceededAttemptSaysTheOomKillerTookProcessesOfARank) {
  AttemptEndCase c(2);
  c.facts.ranks[1].reason = std::string(kOomKilledReasonPrefix) + "2 processes (peak 900 MiB); exited with code 0";
  const AttemptEnd end = c.end();
  EXPECT_EQ(end.job.state, JobState::succeeded);
  const std::string told = "rank 1: " + std::string(kOomKilledReasonPrefix) + "2 processes (peak 900 MiB)";
  EXPECT_EQ(end.attempt.reason, "completed; " + told);
  EXPECT_EQ(end.job.reason, end.attempt.reason) << "the job page shows it";
  ASSERT_EQ(end.events.size(), 1u);
  EXPECT_THAT(end.events[0].message, HasSubstr("(" + told + ")"));
  EXPECT_EQ(end.events[0].details["reason"], end.attempt.reason);
  c.facts.ranks[1].reason = "exited with code 0";
  EXPECT_EQ(c.end().job.reason, "completed") << "no word when nothing was killed";
}

TEST(AttemptEnd, AllRanksDoneSucceedsAndClearsAnEarlierClass) {
  AttemptEndCase c(2);
  c.job.failure_class = "node_lost";
  c.facts.ranks[1].steps = 40;
  const AttemptEnd end = c.end();
  EXPECT_EQ(end.attempt.state, AttemptState::succeeded);
  EXPECT_EQ(end.attempt.reason, "completed");
  EXPECT_EQ(end.attempt.exit_code, 0);
  EXPECT_EQ(end.attempt.steps_completed, 40) << "the furthest rank's steps";
  EXPECT_EQ(end.attempt.ended_at, kNow);
  EXPECT_EQ(end.job.state, JobState::succeeded);
  EXPECT_EQ(end.job.failure_class, "");
  EXPECT_EQ(end.job.ended_at, kNow);
  ASSERT_EQ(end.events.size(), 1u);
  EXPECT_EQ(end.events[0].kind, "job.succeeded");
  EXPECT_EQ(end.events[0].node, "n0,n1");
  EXPECT_EQ(end.events[0].attempt_id, 70);
  EXPECT_EQ(end.events[0].job_id, 7);
  EXPECT_EQ(end.events[0].details["steps"], 40);
  EXPECT_EQ(end.events[0].at, kNow);
}

TEST(AttemptEnd, TheFirstFailedRankSpeaksAndTheJobRetriesAfterABackoff) {
  AttemptEndCase c(3);
  c.job.attempts = 2;
  c.rank_fails(2, 3, "exit 3");
  c.rank_fails(0, 137, "killed by the gang stop");
  const AttemptEnd end = c.end();
  EXPECT_EQ(end.attempt.state, AttemptState::failed);
  EXPECT_EQ(end.attempt.exit_code, 3);
  EXPECT_EQ(end.attempt.failure_class, "user_error");
  EXPECT_FALSE(end.attempt.infrastructure);
  EXPECT_EQ(end.job.state, JobState::pending);
  EXPECT_EQ(end.job.attempts, 2) << "the job's own failure uses its attempt";
  EXPECT_EQ(end.job.not_before, kNow + Millis(2000) * 2) << "base x 2^(attempts used - 1)";
  EXPECT_THAT(end.job.reason, HasSubstr("exit 3; "));
  // What happened and what to do about it are apart, so each is shown on its own line.
  EXPECT_EQ(end.job.suggestion, "The program exited with code 3; check its logs.");
  EXPECT_EQ(end.job.reason.find("check its logs"), std::string::npos) << end.job.reason;
  EXPECT_TRUE(end.job.excluded_nodes.empty()) << "a job's own failure blames no node";
  ASSERT_EQ(end.events.size(), 1u);
  EXPECT_EQ(end.events[0].kind, "job.retrying");
  EXPECT_EQ(end.events[0].details["why"], end.job.reason);
  EXPECT_EQ(end.events[0].details["next_attempt"], 3);
}

// What webhooks and Slack show of a failure: the task as ID_N, its name, attempt, nodes, how long it
// ran, and the failing rank's last lines, bounded and with secrets masked.
TEST(AttemptEnd, AFailureEventCarriesTheTaskItsRunAndTheFailingRanksLastOutput) {
  AttemptEndCase c(2, 1);
  c.job.spec.name = "train-llm";
  c.job.array_task = ArrayTask{5, 3};
  c.attempt.number = 1;
  c.attempt.started_at = kNow - 3725s;
  c.rank_fails(1, 1, "exited with code 1");
  std::string tail;
  for (int i = 0; i < 30; ++i) tail += "step " + std::to_string(i) + " loss 2.0\n";
  tail += "\n  \nexport WANDB_API_KEY=abc123 \x1b[31mred\x1b[0m\nRuntimeError: CUDA out of memory\n";
  c.facts.ranks[1].log_tail = tail;
  const AttemptEnd end = c.end();
  ASSERT_EQ(end.events.size(), 1u);
  const store::Event& event = end.events[0];
  EXPECT_EQ(event.kind, "job.failed");
  EXPECT_THAT(event.message, HasSubstr("job 5_3 failed")) << "an array task is named ID_N";
  EXPECT_EQ(event.details["job_ref"], "5_3");
  EXPECT_EQ(event.details["name"], "train-llm");
  EXPECT_EQ(event.details["attempt"], 1);
  EXPECT_EQ(event.details["nodes"], "n0,n1");
  EXPECT_EQ(event.details["duration_s"], 3725.0);
  const std::string output = event.details["output"];
  EXPECT_EQ(output,
            "step 22 loss 2.0\nstep 23 loss 2.0\nstep 24 loss 2.0\nstep 25 loss 2.0\nstep 26 loss 2.0\nstep 27 loss 2.0\n"
            "step 28 loss 2.0\nstep 29 loss 2.0\nexport WANDB_API_KEY=<masked> [31mred[0m\nRuntimeError: CUDA out of memory")
      << "the last 10 lines that say something, secrets masked, controls dropped";
  EXPECT_EQ(end.attempt.output, output) << "kept with the attempt, for trainyard job and the job page";
  EXPECT_EQ(end.attempt.output_rank, 1);
  const Attempt read_back = attempt_from_json(to_json(end.attempt));
  EXPECT_EQ(read_back.output, output);
  EXPECT_EQ(read_back.output_rank, 1);
}

TEST(AttemptEnd, ALostNodeRetriesWithoutUsingAnAttemptAndIsAvoided) {
  AttemptEndCase c(2, 1);
  c.rank_lost(1);
  const AttemptEnd end = c.end();
  EXPECT_EQ(end.attempt.failure_class, "node_lost");
  EXPECT_TRUE(end.attempt.infrastructure);
  EXPECT_EQ(end.job.state, JobState::pending) << "even with no attempts left";
  EXPECT_EQ(end.job.attempts, 0);
  EXPECT_EQ(end.job.infra_retries, 1);
  EXPECT_EQ(end.job.infra_retries_in_a_row, 1);
  EXPECT_EQ(end.job.excluded_nodes, std::vector<std::string>{"n1"});
}

TEST(AttemptEnd, InfrastructureRetriesInARowStopAtTheLimitUnlessTrainingAdvanced) {
  AttemptEndCase stalled(2);
  stalled.job.infra_retries_in_a_row = 2;  // the limit in the policy above
  stalled.attempt.resumed_from = "/c/job-7/step-0000000010";
  stalled.rank_lost(0);
  const AttemptEnd stopped = stalled.end();
  EXPECT_EQ(stopped.job.state, JobState::failed);
  EXPECT_EQ(stopped.job.ended_at, kNow);

  AttemptEndCase advanced = stalled;
  advanced.facts.ranks[1].steps = 25;  // past the step it resumed from
  const AttemptEnd retried = advanced.end();
  EXPECT_EQ(retried.job.state, JobState::pending);
  EXPECT_EQ(retried.job.infra_retries_in_a_row, 1) << "progress reset the count, then this failure counted";
}

TEST(AttemptEnd, AStuckAttemptCarriesItsDiagnosisAndAvoidsTheStuckNodes) {
  AttemptEndCase c(3);
  c.job.excluded_nodes = {"n2"};
  c.facts.kill_reason = "stuck: rank 2 made no progress for 1800 s";
  c.facts.stuck_ranks = {2};
  c.facts.ranks[2].log_tail = "waiting on all_reduce";
  c.rank_fails(2, -1, "killed");
  c.facts.failed_checks = {"node n2 failed health check 4: core 3 corrupt"};
  const AttemptEnd end = c.end();
  EXPECT_EQ(end.attempt.reason, "stuck: rank 2 made no progress for 1800 s; then node n2 failed health check 4: core 3 corrupt");
  EXPECT_THAT(end.attempt.diagnosis, HasSubstr("--- rank 2 log tail ---\nwaiting on all_reduce"));
  EXPECT_TRUE(end.attempt.infrastructure);
  EXPECT_EQ(end.job.excluded_nodes, std::vector<std::string>{"n2"}) << "listed once";
}

TEST(AttemptEnd, ACancelledJobEndsCancelledWhateverItsRetries) {
  AttemptEndCase c(1);
  c.job.cancel_requested = true;
  c.facts.kill_reason = "cancelled";
  c.rank_fails(0, -1, "");
  const AttemptEnd end = c.end();
  EXPECT_EQ(end.attempt.state, AttemptState::cancelled);
  EXPECT_EQ(end.job.state, JobState::cancelled);
  EXPECT_EQ(end.job.reason, "cancelled on request");
  EXPECT_EQ(end.attempt.reason, "cancelled") << "the daemon's kill reason when the rank gave none";
}

TEST(AttemptEnd, ACommandThatExitsCleanlyWhenAskedToStopIsQueuedAgainNotSucceeded) {
  for (const StopIntent intent : {StopIntent::preempt, StopIntent::requeue}) {
    AttemptEndCase c(2);
    c.job.stopping_to = intent;
    c.facts.kill_reason = "preempted for job 9";
    const AttemptEnd end = c.end();  // every rank exited 0: it saved on SIGUSR1 and left
    EXPECT_EQ(end.attempt.state, intent == StopIntent::preempt ? AttemptState::preempted : AttemptState::requeued);
    EXPECT_EQ(end.job.state, JobState::pending);
    EXPECT_EQ(end.job.attempts, 0) << "a stop to queue again gives back the attempt";
    EXPECT_EQ(end.job.requeues, 1);
    EXPECT_EQ(end.job.stopping_to, StopIntent::none);
    EXPECT_FALSE(end.failure.has_value());
    ASSERT_EQ(end.events.size(), 1u);
    EXPECT_EQ(end.events[0].kind, intent == StopIntent::preempt ? "job.preempted" : "job.requeued");
  }
}

TEST(AttemptEnd, ASimulatedJobThatReachedItsLastStepSucceedsThoughAStopWasAsked) {
  AttemptEndCase c(1);
  c.job.spec.kind = JobKind::simulated;
  c.job.spec.workload.steps = 10;  // the case's ranks report 10 steps
  c.job.stopping_to = StopIntent::preempt;
  EXPECT_EQ(c.end().job.state, JobState::succeeded);
  c.job.spec.workload.steps = 11;
  EXPECT_EQ(c.end().attempt.state, AttemptState::preempted) << "one step short: the stop saved it";
}

TEST(AttemptEnd, ANodesFullDiskKeepsTheRetryOffThatNodeButAQuotaOrAPrintedLineDoesNot) {
  AttemptEndCase c(2);
  c.rank_fails(1, 1, "exited with code 1");
  c.facts.ranks[1].log_tail = "write: No space left on device";
  const AttemptEnd printed = c.end();
  EXPECT_EQ(printed.failure->cls.name, "disk_full");
  EXPECT_FALSE(printed.attempt.infrastructure);
  EXPECT_TRUE(printed.job.excluded_nodes.empty()) << "the node never measured its disk full";

  c.facts.node_disk_low = true;
  const AttemptEnd node_full = c.end();
  ASSERT_TRUE(node_full.failure.has_value());
  EXPECT_EQ(node_full.failure->cls.name, "disk_full");
  EXPECT_TRUE(node_full.attempt.infrastructure);
  EXPECT_THAT(node_full.job.excluded_nodes, ::testing::ElementsAre("n1"));

  c.facts.over_storage_quota = true;
  const AttemptEnd quota = c.end();
  EXPECT_EQ(quota.failure->cls.name, "disk_full");
  EXPECT_FALSE(quota.attempt.infrastructure);
  EXPECT_TRUE(quota.job.excluded_nodes.empty()) << "the job's own quota is not the node's fault";
}

}  // namespace
}  // namespace trainyard::daemon
