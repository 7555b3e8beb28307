// The job state machine driven without sockets or real time: fake agents record what the daemon
// sends, the test plays the agents' replies, and time moves only when the test moves it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>

#include "tests/unit/daemon/harness.h"

namespace trainyard::testing {
namespace {

using ::testing::HasSubstr;

// A cluster of `n` 8-core nodes named n1.. with one running `nodes`-wide job; returns its attempt.
struct RunningJob {
  Job job;
  AttemptId attempt = 0;
  std::vector<std::string> nodes;  // by rank
};

RunningJob start_job(Cluster& c, JobSpec spec, bool all_started = true) {
  RunningJob r;
  r.job = c.submit(std::move(spec));
  const auto attempts = c.stored_attempts(r.job.id);
  EXPECT_FALSE(attempts.empty()) << "job " << r.job.id << " was not placed";
  if (attempts.empty()) return r;
  r.attempt = attempts.back().id;
  r.nodes = c.nodes_of(r.attempt);
  if (all_started) {
    for (const auto& node : r.nodes) c.started(node, r.attempt);
  }
  return r;
}

// A spec that waits for nodes the cluster does not have (yet), rather than being refused.
JobSpec waiting_spec(int nodes) {
  JobSpec spec = command_spec(nodes);
  spec.wait_for_capacity = true;
  return spec;
}

void connect_nodes(Cluster& c, int n) {
  for (int i = 1; i <= n; ++i) c.connect("n" + std::to_string(i));
}

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

TEST(JobManagerNodeLoss, AgentThatReconnectsWithinTheTimeoutKeepsItsAttempt) {
  Cluster c;
  connect_nodes(c, 1);
  RunningJob r = start_job(c, command_spec(1));
  c.jobs.agent_gone("n1", c.agents["n1"].get());
  EXPECT_FALSE(c.jobs.node("n1")->node.connected);
  c.advance(Millis(4000));
  c.jobs.tick();
  c.settle();
  EXPECT_NE(c.jobs.node("n1")->node.state, NodeState::down);
  const AttemptReport report{r.attempt, r.job.id, 9, std::nullopt, ""};
  c.connect("n1", 8, {report});
  for (int i = 0; i < 8; ++i) {
    c.advance(Millis(1000));
    c.heartbeat("n1", {report});
    c.jobs.tick();
    c.settle();
  }
  EXPECT_TRUE(c.agents["n1"]->kills().empty());
  EXPECT_EQ(c.jobs.active_job(r.job.id)->state, JobState::running);
  EXPECT_EQ(c.jobs.active_attempt(r.attempt)->steps_completed, 9);
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

// n1..n3 run a 2-node job; the node of rank `lost_rank` goes silent.
TEST(JobManagerNodeLoss, SilentNodeIsDownAndTheJobRetriesElsewhereForFree) {
  Cluster c;
  connect_nodes(c, 3);
  RunningJob r = start_job(c, command_spec(2));  // one attempt only: infra retries must not use it
  ASSERT_EQ(r.nodes.size(), 2u);
  const std::string lost = r.nodes[1];
  const std::string survivor = r.nodes[0];
  std::string spare;
  for (const auto& [name, agent] : c.agents) {
    if (name != lost && name != survivor) spare = name;
  }
  // Everyone but `lost` heartbeats through the timeout.
  for (int i = 0; i < 6; ++i) {
    c.advance(Millis(1000));
    c.heartbeat(survivor, {AttemptReport{r.attempt, r.job.id, i, std::nullopt, "forward"}});
    c.heartbeat(spare);
    c.jobs.tick();
    c.settle();
  }
  EXPECT_EQ(c.jobs.node(lost)->node.state, NodeState::down);
  EXPECT_TRUE(c.agents[lost]->disconnected);
  EXPECT_EQ(c.jobs.node(survivor)->node.state, NodeState::healthy);
  ASSERT_EQ(c.agents[survivor]->kills().size(), 1u) << "the surviving rank is stopped";
  // The survivor dies of the SIGTERM; the lost rank is what failed the attempt.
  c.exited(survivor, r.attempt, std::nullopt, SIGTERM, "killed by the daemon");
  const Attempt failed = c.stored_attempts(r.job.id).back();
  EXPECT_EQ(failed.failure_class, "node_lost");
  EXPECT_TRUE(failed.infrastructure);
  const Job* job = c.jobs.active_job(r.job.id);
  ASSERT_NE(job, nullptr) << "an infrastructure failure is retried even with attempts=1";
  EXPECT_EQ(job->state, JobState::pending);
  EXPECT_EQ(job->infra_retries, 1);
  EXPECT_EQ(job->attempts, 0) << "the lost attempt does not count against the job";

  // The lost node comes back before the retry: it must still not be used for this job.
  c.connect(lost);
  EXPECT_EQ(c.jobs.node(lost)->node.state, NodeState::healthy);
  c.advance(Millis(2000));
  c.jobs.tick();
  c.settle();
  const auto attempts = c.stored_attempts(r.job.id);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[1].number, 2);
  EXPECT_EQ(std::set<std::string>(attempts[1].nodes.begin(), attempts[1].nodes.end()),
            (std::set<std::string>{survivor, spare}))
      << "the node that failed the job is excluded";
}

TEST(JobManagerNodeLoss, InfrastructureRetriesAreLimited) {
  JobManagerConfig config = test_config();
  config.max_infra_retries = 0;
  Cluster c(config);
  connect_nodes(c, 1);
  RunningJob r = start_job(c, command_spec(1, 3));
  for (int i = 0; i < 6; ++i) {
    c.advance(Millis(1000));
    c.jobs.tick();
    c.settle();
  }
  EXPECT_EQ(c.jobs.node("n1")->node.state, NodeState::down);
  const auto job = c.stored_job(r.job.id);
  EXPECT_EQ(job->state, JobState::failed);
  EXPECT_EQ(job->failure_class, "node_lost");
  EXPECT_THAT(job->reason, HasSubstr("infrastructure retries exhausted"));
}

TEST(JobManagerNodeLoss, OnlyInfrastructureFailuresSinceTrainingLastAdvancedCountAgainstTheLimit) {
  JobManagerConfig config = test_config();
  config.max_infra_retries = 1;
  Cluster c(config);
  connect_nodes(c, 3);
  const JobId job = c.submit(command_spec(1)).id;
  std::set<std::string> down;
  // One second passes; the nodes that are not down heartbeat.
  const auto tick_a_second = [&] {
    c.advance(Millis(1000));
    for (const auto& [name, agent] : c.agents) {
      if (!down.contains(name)) c.heartbeat(name);
    }
    c.jobs.tick();
    c.settle();
  };
  // Waits out the retry's backoff, runs the placed attempt to `step` (0: no progress), then loses its node.
  const auto lose_node_after = [&](std::int64_t step) {
    const auto newest = [&] {
      std::optional<Attempt> last;
      for (const Attempt& a : c.stored_attempts(job)) {
        if (!last || a.id > last->id) last = a;
      }
      return last;
    };
    for (int i = 0; i < 5 && is_terminal(newest()->state); ++i) tick_a_second();
    const Attempt attempt = *newest();
    ASSERT_FALSE(is_terminal(attempt.state)) << "the retry was not placed";
    const std::string node = attempt.nodes.at(0);
    c.started(node, attempt.id);
    c.heartbeat(node, {AttemptReport{attempt.id, job, step, std::nullopt, "forward"}});
    down.insert(node);
    for (int i = 0; i < 6; ++i) tick_a_second();  // past the node timeout
  };
  lose_node_after(5);
  EXPECT_EQ(c.stored_job(job)->infra_retries, 1);
  lose_node_after(9);  // the limit is 1, but training advanced in between
  ASSERT_NE(c.stored_job(job)->state, JobState::failed) << c.stored_job(job)->reason;
  EXPECT_EQ(c.stored_job(job)->infra_retries, 2);
  lose_node_after(0);  // a second one in a row without a step: the limit
  const Job failed = *c.stored_job(job);
  EXPECT_EQ(failed.state, JobState::failed);
  EXPECT_THAT(failed.reason, HasSubstr("infrastructure retries exhausted: 1 in a row without training progress"));
}

TEST(JobManagerFencing, MessagesForAttemptsThatAreNotCurrentAreKilledAndIgnored) {
  Cluster c;
  connect_nodes(c, 2);
  RunningJob r = start_job(c, command_spec(1));
  const std::string node = r.nodes[0];
  const std::string other = node == "n1" ? "n2" : "n1";
  const AttemptId stale = r.attempt + 100;

  c.heartbeat(node, {AttemptReport{stale, r.job.id, 5, std::nullopt, ""}});
  auto kills = c.agents[node]->kills();
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].attempt_id, stale);
  EXPECT_THAT(kills[0].reason, HasSubstr("fenced"));

  c.started(node, stale);
  kills = c.agents[node]->kills();
  ASSERT_EQ(kills.size(), 2u);
  EXPECT_EQ(kills[1].attempt_id, stale);

  // The current attempt, reported by a node that does not run it, is not current there either.
  c.started(other, r.attempt);
  ASSERT_EQ(c.agents[other]->kills().size(), 1u);
  EXPECT_EQ(c.agents[other]->kills()[0].attempt_id, r.attempt);
  c.exited(other, r.attempt, 7);
  c.exited(node, stale, 7);
  EXPECT_EQ(c.jobs.active_job(r.job.id)->state, JobState::running) << "a stale exit changed the job";
  EXPECT_TRUE(c.agents[node]->kills().size() == 2u) << "the real attempt was not killed";
  EXPECT_EQ(c.stored_attempts(r.job.id).back().state, AttemptState::running);

  // A replaced connection speaks for nobody.
  auto old_channel = c.agents[node];
  c.connect(node, 8, {AttemptReport{r.attempt, r.job.id, 1, std::nullopt, ""}});
  EXPECT_TRUE(old_channel->disconnected);
  c.jobs.agent_message(node, old_channel.get(), AttemptExitedMsg{r.attempt, 9, std::nullopt, "", 0, ""});
  c.settle();
  EXPECT_EQ(c.jobs.active_job(r.job.id)->state, JobState::running);
}

TEST(JobManagerHello, OtherProtocolVersionIsRefused) {
  Cluster c;
  HelloMsg hello;
  hello.protocol = kProtocolVersion + 1;
  hello.name = "n1";
  hello.cores = 8;
  auto agent = std::make_shared<FakeAgent>();
  const std::string refusal = c.jobs.agent_hello(hello, agent);
  EXPECT_THAT(refusal, HasSubstr("protocol version " + std::to_string(kProtocolVersion + 1)));
  EXPECT_THAT(refusal, HasSubstr(std::to_string(kProtocolVersion)));
  EXPECT_TRUE(agent->sent.empty()) << "a refused agent was welcomed";
  EXPECT_TRUE(c.jobs.nodes().empty());
}

TEST(JobManagerHello, WelcomesWithTheHeartbeatInterval) {
  Cluster c;
  auto agent = c.connect("n1");
  const auto welcomes = agent->all<WelcomeMsg>();
  ASSERT_EQ(welcomes.size(), 1u);
  EXPECT_EQ(welcomes[0].heartbeat_interval_ms, 1000);
  EXPECT_EQ(c.jobs.node("n1")->node.cores, 8);
  EXPECT_TRUE(c.jobs.node("n1")->node.connected);
}

// The store as a crashed daemon left it: one job RUNNING on n1 and n2.
LoadedState crashed_with_running_job(TimePoint at) {
  LoadedState state;
  for (const std::string name : {"n1", "n2"}) {
    Node node;
    node.name = name;
    node.cores = 8;
    node.connected = true;
    node.data_addr = name + ":7000";
    state.nodes.push_back(node);
  }
  Job job;
  job.id = 7;
  job.spec = command_spec(2, 1);
  job.user = "alice";
  job.state = JobState::running;
  job.submitted_at = at;
  job.started_at = at;
  job.attempts = 1;
  state.active_jobs.push_back(job);
  Attempt attempt;
  attempt.id = 11;
  attempt.job_id = 7;
  attempt.nodes = {"n1", "n2"};
  attempt.cores_per_node = 8;
  attempt.state = AttemptState::running;
  attempt.created_at = at;
  attempt.started_at = at;
  state.active_attempts.push_back(attempt);
  state.max_job_id = 7;
  state.max_attempt_id = 11;
  return state;
}

// Stores what `state` describes, so the restored daemon's later upserts have their records.
void seed(Cluster& c, const LoadedState& state) {
  Change change;
  change.jobs = state.active_jobs;
  change.attempts = state.active_attempts;
  change.nodes = state.nodes;
  c.memory.commit(std::span<const Change>(&change, 1));
}

// Both agents of the restored job come back listing `report`, then heartbeat it for 5 s.
void reconnect_and_report_for_5s(Cluster& c, const AttemptReport& report) {
  c.connect("n1", 8, {report});
  c.connect("n2", 8, {report});
  for (int i = 0; i < 5; ++i) {
    c.advance(Millis(1000));
    c.heartbeat("n1", {report});
    c.heartbeat("n2", {report});
    c.jobs.tick();
    c.settle();
  }
}

TEST(JobManagerRestore, ReconnectingAgentsThatListTheAttemptKeepItRunning) {
  Cluster c;
  const LoadedState state = crashed_with_running_job(c.clock.system_now() - Millis(60000));
  seed(c, state);
  c.jobs.restore(state);
  c.settle();
  const AttemptReport report{11, 7, 40, std::nullopt, "forward"};
  reconnect_and_report_for_5s(c, report);
  EXPECT_TRUE(c.agents["n1"]->kills().empty());
  EXPECT_TRUE(c.agents["n2"]->kills().empty());
  EXPECT_EQ(c.jobs.active_job(7)->state, JobState::running);
  EXPECT_TRUE(c.launches().empty()) << "the running attempt was launched a second time";
  c.exited("n1", 11, 0);
  c.exited("n2", 11, 0);
  EXPECT_EQ(c.stored_job(7)->state, JobState::succeeded);
  const Job next = c.submit(command_spec(1));
  EXPECT_EQ(next.id, 8) << "ids continue after the stored maximum";
}

TEST(JobManagerRestore, ARestoredAttemptIsNotJudgedStuckFromBeforeTheRestart) {
  Cluster c;
  LoadedState state = crashed_with_running_job(c.clock.system_now() - Millis(10000));
  state.active_jobs[0].spec.kind = JobKind::simulated;  // always under stuck watch
  state.active_jobs[0].spec.stuck_after_s = 60;
  state.active_attempts[0].last_step = 77;
  seed(c, state);
  c.jobs.restore(state);
  c.settle();
  c.advance(Millis(2));
  c.jobs.tick();  // before any agent is back, as a real restart's first tick is
  c.settle();
  const AttemptReport report{11, 7, 78, std::nullopt, "forward"};
  reconnect_and_report_for_5s(c, report);
  EXPECT_TRUE(c.agents["n1"]->kills().empty()) << "a healthy attempt was killed after the restart";
  EXPECT_EQ(c.jobs.active_job(7)->state, JobState::running);
  EXPECT_EQ(c.stored_attempts(7).back().diagnosis, "");
  // A rank that really stops is still caught, a whole stuck_after_s after its last advance.
  c.advance(Millis(61000));
  c.heartbeat("n1", {report});
  c.heartbeat("n2", {report});
  c.jobs.tick();
  c.settle();
  EXPECT_EQ(c.agents["n1"]->kills().size(), 1u);
  EXPECT_NE(c.stored_attempts(7).back().diagnosis, "");
}

TEST(JobManagerRestore, AgentThatNoLongerRunsTheAttemptLosesItsRankAfterTheGrace) {
  Cluster c;
  const LoadedState state = crashed_with_running_job(c.clock.system_now() - Millis(60000));
  seed(c, state);
  c.jobs.restore(state);
  c.settle();
  c.connect("n1", 8, {AttemptReport{11, 7, 40, std::nullopt, "forward"}});
  c.connect("n2");  // restarted: it runs nothing
  c.advance(Millis(2000));  // the grace is two heartbeat intervals
  c.jobs.tick();
  c.settle();
  EXPECT_TRUE(c.agents["n1"]->kills().empty()) << "killed within the grace";
  c.advance(Millis(1));
  c.heartbeat("n1", {AttemptReport{11, 7, 41, std::nullopt, "forward"}});
  c.heartbeat("n2");
  c.jobs.tick();
  c.settle();
  ASSERT_EQ(c.agents["n1"]->kills().size(), 1u) << "the rank that survived is stopped";
  EXPECT_EQ(c.agents["n1"]->kills()[0].attempt_id, 11);
  c.exited("n1", 11, std::nullopt, SIGTERM, "killed");
  const Attempt attempt = c.stored_attempts(7).back();
  EXPECT_EQ(attempt.failure_class, "node_lost");
  EXPECT_TRUE(attempt.infrastructure);
  const Job* job = c.jobs.active_job(7);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->state, JobState::pending) << "retried as an infrastructure failure";
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

// The crash came after every rank started but before the RUNNING transition was stored: the agents'
// hellos are the only news that the ranks run, so they must complete the transition.
TEST(JobManagerRestore, StartingAttemptThatEveryAgentReportsBecomesRunning) {
  Cluster c;
  LoadedState state = crashed_with_running_job(c.clock.system_now() - Millis(60000));
  state.active_jobs[0].state = JobState::starting;
  state.active_attempts[0].state = AttemptState::starting;
  state.active_attempts[0].started_at.reset();
  seed(c, state);
  c.jobs.restore(state);
  c.settle();
  const AttemptReport report{11, 7, 3, std::nullopt, "forward"};
  c.connect("n1", 8, {report});
  EXPECT_EQ(c.jobs.active_job(7)->state, JobState::starting) << "running before every rank was confirmed";
  c.connect("n2", 8, {report});
  EXPECT_EQ(c.jobs.active_job(7)->state, JobState::running);
  EXPECT_EQ(c.stored_attempts(7).back().state, AttemptState::running);
  EXPECT_TRUE(c.stored_attempts(7).back().started_at) << "timeout_s counts from started_at";
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
}  // namespace trainyard::testing
