// Changes made while an earlier one is still being stored (issue 53): no answer claims what is not
// stored when the earlier one fails. Requests to one job or node take turns (request_turns.h); a
// change of the daemon's own made from memory holding a request's change carries it, so that
// request is stored with it, in its place, rather than refused and put back
// (daemon/pending_writes.h); a share's usage record never overwrites a change of it being stored.
#include <gtest/gtest.h>

#include "tests/unit/daemon/job_manager_helpers.h"

namespace trainyard::daemon::testing {
namespace {

TEST(ChangesInFlight, ACancelThatTheDaemonsOwnLaterChangeCarriesIsStoredWithItNotRefused) {
  Cluster cluster;
  connect_nodes(cluster, 1);
  const RunningJob running = start_job(cluster, command_spec(1));
  cluster.store.fail_next_commit();
  std::optional<JobManager::CancelResult> answer;
  cluster.jobs.cancel(running.job.id, [&](JobManager::CancelResult result, std::optional<Job>) { answer = result; });
  // The attempt's end arrives while the cancel's commit is in flight: its change is made from
  // memory that holds the cancel (the job's record says cancel requested).
  AttemptExitedMsg exited;
  exited.attempt_id = running.attempt;
  exited.exit_code = 1;
  cluster.jobs.agent_message("n1", cluster.agents.at("n1").get(), exited);
  cluster.settle();
  EXPECT_FALSE(answer.has_value()) << "answered before the store said anything true";
  cluster.tick_until_stored();
  ASSERT_TRUE(answer.has_value()) << "the cancel was never answered";
  EXPECT_NE(*answer, JobManager::CancelResult::not_stored) << "refused, though the change that carries it is stored";
  const std::optional<Job> stored = cluster.stored_job(running.job.id);
  ASSERT_TRUE(stored);
  EXPECT_TRUE(stored->cancel_requested);
  const Job* in_memory = cluster.jobs.active_job(running.job.id);
  EXPECT_EQ(in_memory ? in_memory->state : stored->state, stored->state) << "memory and store agree";
}

TEST(ChangesInFlight, ASecondRequestToAJobWaitsForTheFirstsAnswerAndSeesWhatWasStored) {
  Cluster cluster;
  cluster.connect("n1", 1);
  const Job filler = cluster.submit(command_spec(1));
  const Job queued = cluster.submit(command_spec(1));
  ASSERT_NE(filler.id, queued.id);
  cluster.store.fail_next_commit();
  std::vector<JobManager::ControlOutcome> answers;
  cluster.jobs.hold(queued.id, Hold::owner, [&](JobManager::ControlOutcome o) { answers.push_back(std::move(o)); });
  cluster.jobs.release(queued.id, Hold::owner, [&](JobManager::ControlOutcome o) { answers.push_back(std::move(o)); });
  cluster.settle();
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].result, JobManager::ControlResult::not_stored);
  EXPECT_EQ(answers[1].result, JobManager::ControlResult::wrong_state) << "the release was made once the hold was refused: "
                                                                       << answers[1].why;
  EXPECT_EQ(cluster.jobs.active_job(queued.id)->held, Hold::none);
  EXPECT_EQ(cluster.stored_job(queued.id)->held, Hold::none);
}

TEST(ChangesInFlight, AShareUsageRecordNeverUndoesAChangeOfTheShareBeingStored) {
  Cluster cluster;
  std::vector<Result<void>> answers;
  const auto answered = [&](Result<void> r) { answers.push_back(std::move(r)); };
  cluster.jobs.set_share("team", scheduler::ShareSettings{.weight = 1.0}, std::nullopt, answered);
  cluster.settle();
  cluster.jobs.set_share("team", scheduler::ShareSettings{.weight = 5.0}, std::nullopt, answered);
  cluster.jobs.persist_usage();  // made while the change of the weight is in flight
  cluster.settle();
  ASSERT_EQ(answers.size(), 2u);
  ASSERT_TRUE(answers[1]) << answers[1].error().message;
  bool found = false;
  for (const store::ShareRecord& share : cluster.memory.load().shares) {
    if (share.name != "team") continue;
    found = true;
    EXPECT_EQ(share.weight, 5.0) << "the usage record, made before, overwrote the new weight";
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace trainyard::daemon::testing
