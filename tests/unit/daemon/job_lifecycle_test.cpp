// The job manager's job lifecycle driven without sockets or real time: submission, placement, runs,
// retries, timeouts, cancellation, launch and logs. Fake agents record what the daemon sends, the test
// plays the agents' replies, and time moves only when the test moves it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>

#include "tests/unit/daemon/job_manager_helpers.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

TEST(JobManagerSubmit, AcknowledgesOnlyAfterTheCommit) {
  Cluster c;
  bool called = false;
  c.jobs.submit(waiting_spec(1), "alice", [&](Result<JobManager::Submitted> accepted) {
    called = true;
    ASSERT_TRUE(accepted);
    EXPECT_TRUE(c.store.committed_job(accepted->job.id)) << "acknowledged before its commit";
  });
  EXPECT_FALSE(called) << "acknowledged before the store worker ran";
  c.settle();
  EXPECT_TRUE(called);
  ASSERT_TRUE(c.stored_job(1));
  EXPECT_EQ(c.stored_job(1)->state, JobState::pending);
}

TEST(JobManagerSubmit, FailedCommitIsRefusedAndNeverScheduled) {
  Cluster c;
  connect_nodes(c, 1);
  c.store.fail_commits(true);
  std::optional<Error> refused;
  bool called = false;
  c.jobs.submit(command_spec(1), "alice", [&](Result<JobManager::Submitted> submitted) {
    called = true;
    if (!submitted) refused = submitted.error();
  });
  c.settle();
  ASSERT_TRUE(called);
  ASSERT_TRUE(refused) << "accepted although the commit failed";
  EXPECT_EQ(refused->code, ErrorCode::unavailable) << "the API answers it with 503";
  EXPECT_THAT(refused->message, HasSubstr("not accepted"));
  EXPECT_EQ(c.jobs.active_job(1), nullptr);
  EXPECT_EQ(c.jobs.pending_count(), 0u);
  c.store.fail_commits(false);
  c.jobs.tick();
  c.settle();
  EXPECT_TRUE(c.launches().empty());
  EXPECT_FALSE(c.stored_job(1));
}

TEST(JobManagerPlacement, LaunchesOneRankPerNodeWithPeers) {
  Cluster c;
  connect_nodes(c, 3);
  const Job job = c.submit(command_spec(2));
  const auto launches = c.launches();
  ASSERT_EQ(launches.size(), 2u) << "a 2-node job is launched on exactly two nodes";
  std::set<int> ranks;
  AttemptId attempt = 0;
  for (const auto& [node, list] : launches) {
    ASSERT_EQ(list.size(), 1u);
    const LaunchMsg& l = list.front();
    ranks.insert(l.rank);
    EXPECT_EQ(l.user, "alice") << "the agent picks the job's Unix account by the submitting user";
    if (attempt == 0) attempt = l.attempt_id;
    EXPECT_EQ(l.attempt_id, attempt);
    EXPECT_EQ(l.job_id, job.id);
    EXPECT_EQ(l.attempt_number, 1);
    EXPECT_EQ(l.world_size, 2);
    EXPECT_EQ(l.cores, 8) << "no cores_per_node: the whole node";
    EXPECT_EQ(l.command.argv, std::vector<std::string>{"/bin/true"});
    ASSERT_EQ(l.peers.size(), 2u);
    EXPECT_EQ(l.peers[static_cast<std::size_t>(l.rank)], c.data_addr[node]) << "peers are indexed by rank";
    EXPECT_EQ(l.checkpoint_dir, test_config().checkpoint_root + "/job-" + std::to_string(job.id));
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1}));
  const auto nodes = c.nodes_of(attempt);
  const LaunchMsg rank0 = c.agents[nodes[0]]->launches().front();
  EXPECT_EQ(rank0.master_addr, c.data_addr[nodes[0]].substr(0, c.data_addr[nodes[0]].find(':')));
  EXPECT_EQ(c.jobs.active_job(job.id)->state, JobState::starting);
}

TEST(JobManagerPlacement, MasterPortIsTakenFromTheConfiguredRangeByAttempt) {
  JobManagerConfig config = test_config();
  config.master_port_first = 29500;
  config.master_port_last = 29502;
  Cluster c(config);
  connect_nodes(c, 3);
  std::set<int> ports;
  for (int i = 0; i < 3; ++i) {
    const Job job = c.submit(command_spec(1));
    for (const auto& [node, list] : c.launches()) {
      for (const LaunchMsg& l : list) {
        if (l.job_id != job.id) continue;
        EXPECT_EQ(l.master_port, 29500 + static_cast<int>(l.attempt_id % 3)) << l.attempt_id;
        ports.insert(l.master_port);
      }
    }
  }
  EXPECT_EQ(ports, (std::set<int>{29500, 29501, 29502})) << "three attempts in a row cover the three ports";
}

TEST(JobManagerPlacement, JobWiderThanTheClusterStaysPending) {
  Cluster c;
  connect_nodes(c, 2);
  const Job job = c.submit(waiting_spec(3));
  EXPECT_TRUE(c.launches().empty());
  EXPECT_EQ(c.jobs.active_job(job.id)->state, JobState::pending);
  EXPECT_EQ(c.jobs.pending_count(), 1u);
}

TEST(JobManagerLifecycle, RunningOnlyWhenEveryRankStarted) {
  Cluster c;
  connect_nodes(c, 2);
  RunningJob r = start_job(c, command_spec(2), false);
  ASSERT_EQ(r.nodes.size(), 2u);
  c.started(r.nodes[0], r.attempt);
  EXPECT_EQ(c.jobs.active_job(r.job.id)->state, JobState::starting);
  c.started(r.nodes[1], r.attempt);
  EXPECT_EQ(c.jobs.active_job(r.job.id)->state, JobState::running);
  EXPECT_EQ(c.stored_job(r.job.id)->state, JobState::running);
  EXPECT_EQ(c.stored_attempts(r.job.id).back().state, AttemptState::running);
}

TEST(JobManagerLifecycle, AllRanksExitZeroSucceedsAndFreesTheNodes) {
  Cluster c;
  connect_nodes(c, 2);
  RunningJob r = start_job(c, command_spec(2));
  c.exited(r.nodes[0], r.attempt, 0);
  EXPECT_EQ(c.jobs.active_job(r.job.id)->state, JobState::running) << "one rank is still running";
  c.exited(r.nodes[1], r.attempt, 0);
  EXPECT_EQ(c.jobs.active_job(r.job.id), nullptr);
  const auto job = c.stored_job(r.job.id);
  EXPECT_EQ(job->state, JobState::succeeded);
  EXPECT_EQ(job->exit_code, 0);
  EXPECT_EQ(c.stored_attempts(r.job.id).back().state, AttemptState::succeeded);
  for (const auto& view : c.jobs.nodes()) {
    EXPECT_EQ(view.free_cores, 8) << view.node.name;
    EXPECT_TRUE(view.attempts.empty());
  }
  for (const auto& [name, agent] : c.agents) EXPECT_TRUE(agent->kills().empty()) << name;
}

TEST(JobManagerLifecycle, OneRankFailingKillsTheOthersAndFailsWithItsExitCode) {
  Cluster c;
  connect_nodes(c, 3);
  RunningJob r = start_job(c, command_spec(3));
  ASSERT_EQ(r.nodes.size(), 3u);
  // Rank 1 fails first; ranks 0 and 2 then die of the SIGTERM the daemon sent them.
  c.exited(r.nodes[1], r.attempt, 3, std::nullopt, "exited with code 3");
  EXPECT_TRUE(c.agents[r.nodes[1]]->kills().empty()) << "the rank that already exited is not killed";
  for (int rank : {0, 2}) {
    const auto kills = c.agents[r.nodes[static_cast<std::size_t>(rank)]]->kills();
    ASSERT_EQ(kills.size(), 1u) << "rank " << rank;
    EXPECT_EQ(kills[0].attempt_id, r.attempt);
    EXPECT_EQ(kills[0].grace_ms, 3000);
  }
  c.exited(r.nodes[0], r.attempt, std::nullopt, SIGTERM, "killed by the daemon");
  c.exited(r.nodes[2], r.attempt, std::nullopt, SIGTERM, "killed by the daemon");
  const auto job = c.stored_job(r.job.id);
  EXPECT_EQ(job->state, JobState::failed);
  EXPECT_EQ(job->exit_code, 3) << "the rank that failed first speaks for the attempt";
  EXPECT_EQ(job->failure_class, "user_error");
  const Attempt attempt = c.stored_attempts(r.job.id).back();
  EXPECT_EQ(attempt.state, AttemptState::failed);
  EXPECT_EQ(attempt.failure_class, "user_error");
  EXPECT_FALSE(attempt.infrastructure);
  EXPECT_EQ(attempt.exit_code, 3);
}

TEST(JobManagerRetry, RetriesAfterBackoffWithTheNextAttemptNumber) {
  Cluster c;
  connect_nodes(c, 1);
  RunningJob r = start_job(c, command_spec(1, 2));
  const TimePoint failed_at = c.clock.system_now();
  c.exited(r.nodes[0], r.attempt, 1);
  const Job* job = c.jobs.active_job(r.job.id);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->state, JobState::pending);
  ASSERT_TRUE(job->not_before);
  EXPECT_EQ(*job->not_before, failed_at + Millis(2000)) << "backoff base times 2^0 after the first attempt";
  EXPECT_EQ(c.stored_job(r.job.id)->state, JobState::pending);

  c.advance(Millis(1999));
  c.heartbeat("n1");
  c.jobs.tick();
  c.settle();
  EXPECT_EQ(c.agents["n1"]->launches().size(), 1u) << "placed again before its backoff ended";
  c.advance(Millis(1));
  c.jobs.tick();
  c.settle();
  const auto launches = c.agents["n1"]->launches();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[1].attempt_number, 2);
  EXPECT_NE(launches[1].attempt_id, r.attempt);

  c.started("n1", launches[1].attempt_id);
  c.exited("n1", launches[1].attempt_id, 1);
  const auto stored = c.stored_job(r.job.id);
  EXPECT_EQ(stored->state, JobState::failed) << "both attempts used";
  EXPECT_THAT(stored->reason, HasSubstr("all 2 attempts failed"));
  EXPECT_EQ(stored->attempts, 2);
  EXPECT_EQ(c.stored_attempts(r.job.id).size(), 2u);
}

TEST(JobManagerRetry, AJobThatSucceedsOnARetryShowsNoFailureClass) {
  Cluster c;
  connect_nodes(c, 1);
  RunningJob r = start_job(c, command_spec(1, 2));
  c.exited(r.nodes[0], r.attempt, 1);
  EXPECT_EQ(c.stored_job(r.job.id)->failure_class, "user_error") << "pending on its retry, it says why";
  c.advance(Millis(2000));
  c.heartbeat("n1");
  c.jobs.tick();
  c.settle();
  const auto launches = c.agents["n1"]->launches();
  ASSERT_EQ(launches.size(), 2u);
  c.started("n1", launches[1].attempt_id);
  c.exited("n1", launches[1].attempt_id, 0);
  const auto stored = c.stored_job(r.job.id);
  EXPECT_EQ(stored->state, JobState::succeeded);
  EXPECT_EQ(stored->failure_class, "");
  EXPECT_EQ(c.stored_attempts(r.job.id)[0].failure_class, "user_error") << "the attempt keeps its own";
}

TEST(JobManagerRetry, ExitRuleEndsTheJobDespiteAttemptsLeft) {
  Cluster c;
  connect_nodes(c, 1);
  JobSpec spec = command_spec(1, 5);
  spec.retry.evaluate_on_exit.push_back(ExitRule{"4?", std::nullopt, std::nullopt, RetryAction::exit});
  RunningJob r = start_job(c, spec);
  c.exited(r.nodes[0], r.attempt, 42);
  const auto job = c.stored_job(r.job.id);
  EXPECT_EQ(job->state, JobState::failed);
  EXPECT_THAT(job->reason, HasSubstr("evaluate_on_exit[0] says exit"));
  EXPECT_EQ(c.jobs.active_job(r.job.id), nullptr);
}

TEST(JobManagerRetry, BackoffDoublesWithEachFailedAttempt) {
  Cluster c;
  connect_nodes(c, 1);
  RunningJob r = start_job(c, command_spec(1, 3));
  c.exited("n1", r.attempt, 1);
  c.advance(Millis(2000));
  c.jobs.tick();
  c.settle();
  const auto launches = c.agents["n1"]->launches();
  ASSERT_EQ(launches.size(), 2u);
  c.started("n1", launches[1].attempt_id);
  const TimePoint failed_at = c.clock.system_now();
  c.exited("n1", launches[1].attempt_id, 1);
  ASSERT_TRUE(c.jobs.active_job(r.job.id)->not_before);
  EXPECT_EQ(*c.jobs.active_job(r.job.id)->not_before, failed_at + Millis(4000)) << "base times 2^1 after two attempts";
}

TEST(JobManagerTimeout, AttemptPastTimeoutIsKilledAndClassified) {
  Cluster c;
  connect_nodes(c, 1);
  JobSpec spec = command_spec(1);
  spec.timeout_s = 3;
  RunningJob r = start_job(c, spec);
  for (int i = 0; i < 3; ++i) {
    c.advance(Millis(1000));
    c.heartbeat("n1", {AttemptReport{r.attempt, r.job.id, i, std::nullopt, ""}});
    c.jobs.tick();
    c.settle();
  }
  EXPECT_TRUE(c.agents["n1"]->kills().empty()) << "killed before timeout_s had passed";
  c.advance(Millis(1));
  c.jobs.tick();
  c.settle();
  const auto kills = c.agents["n1"]->kills();
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_THAT(kills[0].reason, HasSubstr("timeout"));
  c.exited("n1", r.attempt, std::nullopt, SIGTERM, "killed");
  const auto job = c.stored_job(r.job.id);
  EXPECT_EQ(job->state, JobState::failed);
  EXPECT_EQ(job->failure_class, "timeout");
}

TEST(JobManagerCancel, PendingJobIsCancelledAtOnce) {
  Cluster c;
  connect_nodes(c, 1);
  const Job job = c.submit(waiting_spec(2));
  std::optional<JobManager::CancelResult> result;
  c.jobs.cancel(job.id, [&](JobManager::CancelResult res, std::optional<Job> updated) {
    result = res;
    ASSERT_TRUE(updated);
    EXPECT_EQ(updated->state, JobState::cancelled);
  });
  c.settle();
  EXPECT_EQ(result, JobManager::CancelResult::cancelled);
  EXPECT_EQ(c.stored_job(job.id)->state, JobState::cancelled);
  EXPECT_EQ(c.jobs.pending_count(), 0u);
  c.connect("n2");
  EXPECT_TRUE(c.launches().empty()) << "a cancelled job was placed once nodes appeared";

  c.jobs.cancel(job.id, [&](JobManager::CancelResult res, std::optional<Job>) { result = res; });
  EXPECT_EQ(result, JobManager::CancelResult::not_active);
}

TEST(JobManagerCancel, RunningJobIsKilledThenCancelled) {
  Cluster c;
  connect_nodes(c, 2);
  RunningJob r = start_job(c, command_spec(2, 3));
  std::optional<JobManager::CancelResult> result;
  c.jobs.cancel(r.job.id, [&](JobManager::CancelResult res, std::optional<Job>) { result = res; });
  for (const auto& node : r.nodes) EXPECT_TRUE(c.agents[node]->kills().empty()) << "killed before the commit";
  c.settle();
  EXPECT_EQ(result, JobManager::CancelResult::cancelling);
  for (const auto& node : r.nodes) ASSERT_EQ(c.agents[node]->kills().size(), 1u) << node;
  EXPECT_EQ(c.jobs.active_job(r.job.id)->state, JobState::running) << "running until the ranks exit";
  for (const auto& node : r.nodes) c.exited(node, r.attempt, std::nullopt, SIGTERM, "killed");
  const auto job = c.stored_job(r.job.id);
  EXPECT_EQ(job->state, JobState::cancelled) << "no retry for a cancelled job, attempts left or not";
  EXPECT_EQ(c.stored_attempts(r.job.id).back().state, AttemptState::cancelled);
  EXPECT_EQ(c.stored_attempts(r.job.id).back().failure_class, "cancelled");
}

// Runs a submission up to the scheduling pass that places it, leaving the placement's commit (and
// so the launch) still queued on the store worker.
void place_without_committing(Cluster& c, JobSpec spec) {
  bool accepted = false;
  c.jobs.submit(std::move(spec), "alice", [&](Result<JobManager::Submitted> submitted) { accepted = submitted.ok(); });
  c.io.run_until([&] { return accepted; });
  c.timers.fire_due();
}

TEST(JobManagerLaunch, NodeGoneBeforeTheLaunchFailsTheAttemptAsNodeLost) {
  Cluster c;
  connect_nodes(c, 1);
  place_without_committing(c, command_spec(1));
  ASSERT_TRUE(c.jobs.active_attempt(1)) << "the pass did not place the job";
  c.jobs.agent_gone("n1", c.agents["n1"].get());
  c.settle();
  EXPECT_TRUE(c.launches().empty());
  const auto attempts = c.stored_attempts(1);
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].failure_class, "node_lost");
  ASSERT_NE(c.jobs.active_job(1), nullptr);
  EXPECT_EQ(c.jobs.active_job(1)->state, JobState::pending);
}

TEST(JobManagerLaunch, RanksKilledBeforeTheirLaunchAreNeverLaunched) {
  Cluster c;
  connect_nodes(c, 2);
  place_without_committing(c, command_spec(2));
  const auto placed = c.jobs.active_attempt(1);
  ASSERT_TRUE(placed);
  ASSERT_EQ(placed->nodes.size(), 2u);
  const std::string silent = placed->nodes[0];
  const std::string alive = placed->nodes[1];
  c.clock.advance(Millis(5001));
  c.jobs.agent_message(alive, c.agents[alive].get(), HeartbeatMsg{});
  c.jobs.tick();  // `silent` is DOWN before the placement's commit completed
  c.settle();
  for (const auto& message : c.agents[alive]->sent) {
    EXPECT_FALSE(std::holds_alternative<LaunchMsg>(message)) << "a rank of a stopped attempt was launched";
  }
  const auto attempts = c.stored_attempts(1);
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].failure_class, "node_lost");
  EXPECT_TRUE(is_terminal(attempts[0].state)) << "the attempt waits for a rank that never ran";
  ASSERT_NE(c.jobs.active_job(1), nullptr);
  EXPECT_EQ(c.jobs.active_job(1)->state, JobState::pending);
}

TEST(JobManagerLogs, FetchesEachRankAndTimesOutTheSilentOne) {
  Cluster c;
  connect_nodes(c, 2);
  RunningJob r = start_job(c, command_spec(2));
  const auto attempt = c.jobs.active_attempt(r.attempt);
  ASSERT_TRUE(attempt);
  std::optional<std::vector<RankLog>> logs;
  c.jobs.logs().fetch(*attempt, std::nullopt, 100, [&](std::vector<RankLog> l) { logs = std::move(l); });
  const auto requests = c.agents[r.nodes[0]]->all<LogRequestMsg>();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].tail_lines, 100);
  EXPECT_EQ(requests[0].max_bytes, kMaxLogReplyBytes);
  c.send(r.nodes[0], LogReplyMsg{requests[0].request_id, r.attempt, "hello from rank 0", "", 5000, true});
  EXPECT_FALSE(logs) << "answered before every rank replied or timed out";
  c.advance(Millis(1000));
  ASSERT_TRUE(logs);
  ASSERT_EQ(logs->size(), 2u);
  EXPECT_EQ((*logs)[0].text, "hello from rank 0");
  EXPECT_EQ((*logs)[0].error, "");
  EXPECT_EQ((*logs)[0].log_bytes, 5000);
  EXPECT_TRUE((*logs)[0].truncated);
  EXPECT_THAT((*logs)[1].error, HasSubstr("did not answer"));
}

}  // namespace
}  // namespace trainyard::daemon::testing
