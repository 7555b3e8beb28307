// The job manager and its agents: hellos, nodes lost and reconnecting, and fencing of messages
// for attempts that are not current (the node registry's own tests are in node_registry_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>

#include "tests/unit/daemon/job_manager_helpers.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

TEST(JobManagerNodeLoss, AgentThatReconnectsWithinTheGraceKeepsItsAttempt) {
  Cluster c;
  connect_nodes(c, 1);
  RunningJob r = start_job(c, command_spec(1));
  c.jobs.agent_gone("n1", c.agents["n1"].get());
  EXPECT_FALSE(c.jobs.node("n1")->node.connected);
  c.advance(Millis(1500));  // within the disconnect grace (job_recovery_test.cpp has what happens after it)
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

// The daemon itself slept (SIGSTOP, a VM stall) for four node timeouts: nothing was heard because
// nothing ran, so the node is not DOWN and its attempt runs on (daemon/own_pauses.h).
TEST(JobManagerNodeLoss, ADaemonThatWasPausedDoesNotHoldItsOwnSleepAgainstItsNodes) {
  Cluster c;
  connect_nodes(c, 1);
  RunningJob r = start_job(c, command_spec(1));
  const AttemptReport report{r.attempt, r.job.id, 3, std::nullopt, ""};
  c.heartbeat("n1", {report});
  c.jobs.tick();
  c.advance(Millis(20000));
  c.jobs.tick();
  c.settle();
  EXPECT_EQ(c.jobs.node("n1")->node.state, NodeState::healthy);
  EXPECT_TRUE(c.agents["n1"]->kills().empty());
  // Awake, silence counts again: a node that stays silent is DOWN a node timeout (5 s) later.
  for (int i = 0; i < 4; ++i) {
    c.advance(Millis(1000));
    c.jobs.tick();
    c.settle();
  }
  EXPECT_EQ(c.jobs.node("n1")->node.state, NodeState::healthy) << "4.5 s of silence while awake";
  for (int i = 0; i < 2; ++i) {
    c.advance(Millis(1000));
    c.jobs.tick();
    c.settle();
  }
  EXPECT_EQ(c.jobs.node("n1")->node.state, NodeState::down) << "6.5 s of silence while awake";
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
  const Result<void> refusal = c.jobs.agent_hello(hello, agent);
  ASSERT_FALSE(refusal.ok());
  EXPECT_EQ(refusal.error().field, "protocol");
  EXPECT_THAT(refusal.error().message, HasSubstr("protocol version " + std::to_string(kProtocolVersion + 1)));
  EXPECT_THAT(refusal.error().message, HasSubstr(std::to_string(kProtocolVersion)));
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

}  // namespace
}  // namespace trainyard::daemon::testing
