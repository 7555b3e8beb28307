// Recovery in seconds with fake agents and fake time: a gang whose agent's
// connection closed fails after the disconnect grace (or at once when a peer rank saw the node's
// data-plane connection close), a reconnect within the grace changes nothing, and a resume
// pre-flights only the nodes it has not proven. The pure policy has its own test (recovery_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <map>

#include "healthcheck/health_json.h"
#include "tests/unit/daemon/accelerator_reports.h"
#include "tests/unit/daemon/job_manager_helpers.h"

namespace trainyard::daemon::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// n1..n3 run a 2-node job (one attempt of its own: node losses must not use it).
struct LostNode {
  Cluster c;
  RunningJob r;
  std::string lost, survivor, spare;

  explicit LostNode(JobManagerConfig config = test_config()) : c(std::move(config)) {
    connect_nodes(c, 3);
    r = start_job(c, command_spec(2));
    lost = r.nodes.at(1);
    survivor = r.nodes.at(0);
    for (const auto& [name, agent] : c.agents) {
      if (name != lost && name != survivor) spare = name;
    }
  }
  void close_connection() {
    c.jobs.agent_gone(lost, c.agents[lost].get());
    c.settle();
  }
  // The survivor's collective saw the lost rank's data-plane connection close.
  void survivor_saw_close() {
    AttemptExitedMsg exit;
    exit.attempt_id = r.attempt;
    exit.exit_code = 1;
    exit.reason = "collective_timeout: rank 1 (10.0.0.2:7000) closed the connection";
    exit.peer_closed_rank = 1;
    c.send(survivor, exit);
  }
  Attempt ended_attempt() { return c.stored_attempts(r.job.id).front(); }
  // The lost node's fence keeper: its agent died, and `attempts` stopped.
  void keeper_reports(std::vector<AttemptId> attempts) {
    ASSERT_TRUE(c.jobs.attempts_stopped(AttemptsStoppedMsg{kProtocolVersion, lost, std::move(attempts)}));
    c.settle();
  }
};

TEST(JobRecovery, AClosedConnectionFailsTheGangWhenTheGraceEndsLongBeforeTheNodeTimeout) {
  LostNode t;
  t.close_connection();
  t.c.advance(Millis(1999));
  EXPECT_TRUE(t.c.agents[t.survivor]->kills().empty()) << "within the grace nothing happens";
  t.c.advance(Millis(1));
  ASSERT_EQ(t.c.agents[t.survivor]->kills().size(), 1u) << "the grace is over: the gang is stopped";
  EXPECT_THAT(t.c.agents[t.survivor]->kills()[0].reason, HasSubstr("did not reconnect within 2000 ms"));
  t.c.exited(t.survivor, t.r.attempt, std::nullopt, SIGTERM, "killed by the daemon");
  const Attempt failed = t.ended_attempt();
  EXPECT_EQ(failed.failure_class, "node_lost");
  EXPECT_TRUE(failed.infrastructure);
  EXPECT_THAT(failed.reason, HasSubstr("node_lost: the agent of node " + t.lost + " disconnected"));
  const Job* job = t.c.jobs.active_job(t.r.job.id);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->state, JobState::pending);
  EXPECT_EQ(job->attempts, 0) << "not the job's fault: its own attempt is not used";
  EXPECT_NE(t.c.jobs.node(t.lost)->node.state, NodeState::down) << "DOWN is still the node timeout's call";
  // It resumes on the survivor and the spare after the backoff, the lost node avoided.
  t.c.advance(Millis(2000));
  t.c.jobs.tick();
  t.c.settle();
  const auto attempts = t.c.stored_attempts(t.r.job.id);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_THAT(attempts.back().nodes, ::testing::UnorderedElementsAre(t.survivor, t.spare));
}

TEST(JobRecovery, AReconnectWithinTheGraceChangesNothing) {
  LostNode t;
  t.close_connection();
  t.c.advance(Millis(1500));
  const AttemptReport report{t.r.attempt, t.r.job.id, 7, std::nullopt, "forward"};
  t.c.connect(t.lost, 8, {report});
  for (int i = 0; i < 6; ++i) {
    t.c.advance(Millis(1000));
    t.c.heartbeat(t.lost, {report});
    t.c.heartbeat(t.survivor, {AttemptReport{t.r.attempt, t.r.job.id, 7, std::nullopt, "forward"}});
    t.c.jobs.tick();
    t.c.settle();
  }
  EXPECT_TRUE(t.c.agents[t.survivor]->kills().empty());
  EXPECT_TRUE(t.c.agents[t.lost]->kills().empty());
  EXPECT_EQ(t.c.jobs.active_job(t.r.job.id)->state, JobState::running);
  EXPECT_EQ(t.c.stored_attempts(t.r.job.id).size(), 1u);
}

TEST(JobRecovery, ACloseTheDaemonMadeItselfLosesNothing) {
  LostNode t;
  t.c.jobs.closing_agent_connections();  // shutting down: the agents come back to the next daemon
  t.close_connection();
  t.c.advance(Millis(3000));
  EXPECT_TRUE(t.c.agents[t.survivor]->kills().empty());
  EXPECT_EQ(t.c.jobs.active_job(t.r.job.id)->state, JobState::running);
}

TEST(JobRecovery, APeerThatSawTheConnectionCloseLosesTheNodeAtOnce) {
  LostNode t;
  t.close_connection();
  t.survivor_saw_close();  // no time passes
  const Attempt failed = t.ended_attempt();
  EXPECT_EQ(failed.state, AttemptState::failed) << "every rank is accounted for: the attempt is over";
  EXPECT_EQ(failed.failure_class, "node_lost");
  EXPECT_TRUE(failed.infrastructure);
  EXPECT_THAT(failed.reason, HasSubstr("the agent of node " + t.lost + " disconnected and rank 0 saw its data-plane "
                                       "connection close"))
      << "the lost node speaks for the attempt, not the rank that died of it";
  EXPECT_EQ(t.c.jobs.active_job(t.r.job.id)->state, JobState::pending);
}

// The peer's word comes at once, but the dead agent's fence keeper may still be giving what is
// left of its rank the kill grace: the node is lost, and its attempt replaced, only after that.
TEST(JobRecovery, APeersCloseLosesTheNodeOnlyOnceItsAttemptsAreSurelyStopped) {
  JobManagerConfig config = test_config();
  config.recovery.stopped_within = Millis(750);
  LostNode t(std::move(config));
  t.close_connection();
  t.survivor_saw_close();
  ASSERT_TRUE(t.c.jobs.active_attempt(t.r.attempt)) << "lost before its processes had the kill grace to stop";
  t.c.advance(Millis(749));
  ASSERT_TRUE(t.c.jobs.active_attempt(t.r.attempt));
  t.c.advance(Millis(1));
  const Attempt failed = t.ended_attempt();
  EXPECT_EQ(failed.failure_class, "node_lost");
  EXPECT_TRUE(failed.infrastructure);
  EXPECT_THAT(failed.reason, HasSubstr("rank 0 saw its data-plane connection close"));
}

// The keeper's report says the dead agent's rank stopped: with a peer's word the node is lost at
// once, not after the kill grace and its margin, whichever of the two comes first.
TEST(JobRecovery, AKeeperReportAndAPeersCloseLoseTheNodeAtOnce) {
  for (const bool report_first : {true, false}) {
    JobManagerConfig config = test_config();
    config.recovery.stopped_within = stopped_within_after(Millis(30'000));
    LostNode t(std::move(config));
    t.close_connection();
    if (report_first) {
      t.keeper_reports({t.r.attempt});
      EXPECT_TRUE(t.c.agents[t.survivor]->kills().empty()) << "nothing yet says the agent is gone for good";
      t.survivor_saw_close();  // no time passes
    } else {
      t.survivor_saw_close();
      ASSERT_TRUE(t.c.jobs.active_attempt(t.r.attempt)) << "a peer's word alone waits out the kill grace";
      t.keeper_reports({t.r.attempt});  // no time passes
    }
    ASSERT_FALSE(t.c.jobs.active_attempt(t.r.attempt)) << "report first: " << report_first;
    const Attempt failed = t.ended_attempt();
    EXPECT_EQ(failed.failure_class, "node_lost");
    EXPECT_TRUE(failed.infrastructure);
    EXPECT_THAT(failed.reason, HasSubstr("the agent of node " + t.lost + " disconnected and rank 0 saw its data-plane "
                                         "connection close; its fence keeper stopped the attempt's processes"))
        << "the lost node speaks for the attempt";
    EXPECT_EQ(t.c.jobs.active_job(t.r.job.id)->state, JobState::pending);
  }
}

// Without a peer's word, the report spares only the wait for the stop: the grace still decides.
TEST(JobRecovery, AKeeperReportWithoutAPeersWordWaitsOnlyForTheGrace) {
  JobManagerConfig config = test_config();
  config.recovery.stopped_within = stopped_within_after(Millis(10'000));
  LostNode t(std::move(config));
  t.close_connection();
  t.keeper_reports({t.r.attempt});
  t.c.advance(Millis(1999));
  EXPECT_TRUE(t.c.agents[t.survivor]->kills().empty());
  t.c.advance(Millis(1));
  ASSERT_EQ(t.c.agents[t.survivor]->kills().size(), 1u) << "the grace is over, 10.5 s before the kill grace would be";
  EXPECT_TRUE(t.c.agents[t.lost]->kills().empty()) << "the lost rank is gone: nothing to tell its node";
  t.c.exited(t.survivor, t.r.attempt, std::nullopt, SIGTERM, "killed by the daemon");
  EXPECT_THAT(t.ended_attempt().reason, HasSubstr("did not reconnect within 2000 ms; its fence keeper stopped"));
}

TEST(JobRecovery, AKeeperReportOfAttemptsTheNodeDoesNotRunChangesNothing) {
  LostNode t;
  t.close_connection();
  t.keeper_reports({t.r.attempt + 1000});
  ASSERT_TRUE(t.c.jobs.active_attempt(t.r.attempt));
  EXPECT_TRUE(t.c.agents[t.survivor]->kills().empty());
  // Nor does the survivor's own node's keeper speak for the lost node's rank.
  ASSERT_TRUE(t.c.jobs.attempts_stopped(AttemptsStoppedMsg{kProtocolVersion, t.spare, {t.r.attempt}}));
  t.c.settle();
  ASSERT_TRUE(t.c.jobs.active_attempt(t.r.attempt));
}

TEST(JobRecovery, TheCloseMaySeeThePeersReportFirst) {
  LostNode t;
  t.survivor_saw_close();  // its exit overtakes the closing WebSocket
  ASSERT_TRUE(t.c.jobs.active_attempt(t.r.attempt)) << "the lost rank's node is still connected: it is stopped";
  t.close_connection();
  const Attempt failed = t.ended_attempt();
  EXPECT_EQ(failed.failure_class, "node_lost");
  EXPECT_THAT(failed.reason, HasSubstr("rank 0 saw its data-plane connection close"));
}

TEST(JobRecovery, APeerCloseFromANodeStillConnectedIsNoNodeLoss) {
  LostNode t;
  t.survivor_saw_close();
  ASSERT_EQ(t.c.agents[t.lost]->kills().size(), 1u) << "its rank is stopped like any other";
  t.c.exited(t.lost, t.r.attempt, 1, std::nullopt, "collective_timeout: rank 0 closed the connection");
  const Attempt failed = t.ended_attempt();
  EXPECT_NE(failed.failure_class, "node_lost");
  EXPECT_EQ(failed.failure_class, "collective_timeout");
}

// Time passes with every connected agent heartbeating, so only what the test closes is lost.
void pass_time(Cluster& c, Millis total) {
  for (Millis passed{0}; passed < total; passed += Millis(500)) {
    c.advance(Millis(500));
    for (const auto& [name, agent] : c.agents) {
      if (c.jobs.node(name)->node.connected) c.heartbeat(name);
    }
    c.jobs.tick();
    c.settle();
  }
}

TEST(JobRecovery, AResumePreflightsOnlyWhatItHasNotProven) {
  Cluster c(preflight_config());
  connect_nodes(c, 3);
  const Job job = c.submit(command_spec(2));
  std::map<std::string, std::size_t> answered;
  ASSERT_EQ(pass_health_tasks(c, answered), 2) << "a first attempt is pre-flighted on both nodes";
  const AttemptId first = c.stored_attempts(job.id).back().id;
  const std::vector<std::string> nodes = c.nodes_of(first);
  ASSERT_EQ(nodes.size(), 2u);
  for (const auto& node : nodes) c.started(node, first);
  // Rank 1's agent dies; rank 0 saw it go. The resume runs on the survivor and the third node,
  // which has never been checked: both are tested, and the launch waits for that.
  c.jobs.agent_gone(nodes[1], c.agents[nodes[1]].get());
  c.settle();
  AttemptExitedMsg exit{first, 1, std::nullopt, "collective_timeout: rank 1 closed the connection", 3, ""};
  exit.peer_closed_rank = 1;
  c.send(nodes[0], exit);
  pass_time(c, Millis(2000));
  const AttemptId second = c.stored_attempts(job.id).back().id;
  ASSERT_NE(second, first);
  EXPECT_TRUE(c.nodes_of(second).empty()) << "not launched before its pre-flight passed";
  ASSERT_EQ(pass_health_tasks(c, answered), 2);
  const std::vector<std::string> resumed = c.nodes_of(second);
  ASSERT_EQ(resumed.size(), 2u);
  for (const auto& node : resumed) c.started(node, second);

  // Now both nodes are proven: the third passed a check just now, and the survivor kept running.
  const std::string gone = resumed[0] == nodes[0] ? resumed[1] : resumed[0];
  const int gone_rank = resumed[0] == gone ? 0 : 1;
  c.jobs.agent_gone(gone, c.agents[gone].get());
  c.settle();
  AttemptExitedMsg again{second, 1, std::nullopt, "collective_timeout: peer closed the connection", 5, ""};
  again.peer_closed_rank = gone_rank;
  c.send(nodes[0], again);
  c.connect(nodes[1]);  // back, checked within warm_for by the first pre-flight
  pass_time(c, Millis(2000));
  const AttemptId third = c.stored_attempts(job.id).back().id;
  ASSERT_NE(third, second);
  EXPECT_EQ(pass_health_tasks(c, answered), 0) << "survivor and warm node: no pre-flight";
  EXPECT_EQ(c.nodes_of(third).size(), 2u) << "launched at once";
}

// A node killed during its attempt's pre-flight: the check ends when the grace does, not at the
// task timeout a minute later (seen in the chaos soak as a minute of 8 cores held in pre-flight).
TEST(JobRecovery, APreflightWaitingOnAGoneNodeEndsWithTheGrace) {
  Cluster c(preflight_config());
  connect_nodes(c, 3);
  const Job job = c.submit(command_spec(2));
  std::vector<std::string> tested;
  for (const auto& [name, agent] : c.agents) {
    if (!agent->all<HealthCheckMsg>().empty()) tested.push_back(name);
  }
  ASSERT_EQ(tested.size(), 2u);
  const std::string gone = tested[0], answering = tested[1];
  c.jobs.agent_gone(gone, c.agents[gone].get());
  c.settle();
  const HealthCheckMsg task = c.agents[answering]->all<HealthCheckMsg>().at(0);
  c.send(answering, HealthResultMsg{task.task_id, nullptr, "collective: rank 0 closed the connection"});
  pass_time(c, Millis(1500));
  EXPECT_TRUE(c.jobs.health().running_on(gone)) << "within the grace the check waits";
  EXPECT_EQ(c.stored_attempts(job.id).front().state, AttemptState::starting);
  pass_time(c, Millis(1000));
  EXPECT_FALSE(c.jobs.health().running_on(answering)) << "the check still holds its nodes, waiting for the gone one";
  EXPECT_NE(c.stored_attempts(job.id).front().state, AttemptState::starting);
}

TEST(JobRecovery, AWarmSpareIsHeldForAResumeWhichStartsOnItAtOnce) {
  JobManagerConfig config = preflight_config();
  config.recovery.warm_spares = 1;
  Cluster c(config);
  std::map<std::string, std::size_t> answered;
  connect_nodes(c, 3);
  ASSERT_EQ(pass_health_tasks(c, answered), 1) << "the spare is tested as it is chosen";
  const Job job = c.submit(command_spec(2));
  ASSERT_EQ(pass_health_tasks(c, answered), 2) << "the first attempt's pre-flight";
  const AttemptId first = c.stored_attempts(job.id).back().id;
  const std::vector<std::string> nodes = c.nodes_of(first);
  ASSERT_EQ(nodes.size(), 2u);
  const std::string spare = "n1";
  EXPECT_EQ(std::count(nodes.begin(), nodes.end(), spare), 0) << "new work does not take the spare";
  for (const auto& node : nodes) c.started(node, first);

  c.jobs.agent_gone(nodes[1], c.agents[nodes[1]].get());
  c.settle();
  AttemptExitedMsg exit{first, 1, std::nullopt, "collective_timeout: rank 1 closed the connection", 3, ""};
  exit.peer_closed_rank = 1;
  c.send(nodes[0], exit);  // no time passes: no grace, no backoff, no scheduling tick
  const auto attempts = c.stored_attempts(job.id);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_THAT(attempts.back().nodes, ::testing::UnorderedElementsAre(nodes[0], spare));
  EXPECT_EQ(pass_health_tasks(c, answered), 0) << "survivor and warm spare: no pre-flight";
  EXPECT_EQ(c.nodes_of(attempts.back().id).size(), 2u) << "launched at once";
}

// The survivor's pre-flight is fresher than the spare's check, so a tick that chooses spares
// between the attempt's end and its resume would prefer the idle survivor to the spare: it must
// not, or the resume finds one node too few and the job, which placement never gives spares,
// waits for good.
TEST(JobRecovery, AResumingJobsSurvivorIsNotMadeASpareInPlaceOfTheOneItNeeds) {
  JobManagerConfig config = preflight_config();
  config.recovery.warm_spares = 1;
  Cluster c(config);
  std::map<std::string, std::size_t> answered;
  connect_nodes(c, 3);
  ASSERT_EQ(pass_health_tasks(c, answered), 1) << "the spare is tested as it is chosen";
  c.advance(Millis(1000));  // the pre-flight below passes later than the spare's check
  const Job job = c.submit(command_spec(2));
  ASSERT_EQ(pass_health_tasks(c, answered), 2) << "the first attempt's pre-flight";
  const AttemptId first = c.stored_attempts(job.id).back().id;
  const std::vector<std::string> nodes = c.nodes_of(first);
  ASSERT_EQ(nodes.size(), 2u);
  ASSERT_EQ(std::count(nodes.begin(), nodes.end(), "n1"), 0) << "n1 is the spare";
  for (const auto& node : nodes) c.started(node, first);

  c.jobs.agent_gone(nodes[1], c.agents[nodes[1]].get());
  c.settle();
  AttemptExitedMsg exit{first, 1, std::nullopt, "collective_timeout: rank 1 closed the connection", 3, ""};
  exit.peer_closed_rank = 1;
  c.jobs.agent_message(nodes[0], c.agents.at(nodes[0]).get(), exit);  // the attempt ends; its commit is pending
  c.jobs.tick();                                                      // spares are chosen before the resume
  c.settle();

  const auto attempts = c.stored_attempts(job.id);
  ASSERT_EQ(attempts.size(), 2u) << "the job did not resume: " << c.stored_job(job.id).value_or(Job{}).reason;
  EXPECT_THAT(attempts.back().nodes, ::testing::UnorderedElementsAre(nodes[0], "n1"));
}

// A node cut off from the daemon with its connection still open (a link down, a frozen agent): its
// gang's survivor fails its collective and is stopped, but the cut node cannot say it stopped too.
struct CutNode : LostNode {
  // Time passes with every node but the cut one heartbeating.
  void pass(Millis total) {
    for (Millis passed{0}; passed < total; passed += Millis(500)) {
      c.advance(Millis(500));
      c.heartbeat(survivor);
      c.heartbeat(spare);
      c.jobs.tick();
      c.settle();
    }
  }
  void survivor_times_out() {
    c.exited(survivor, r.attempt, 1, std::nullopt, "collective_timeout: rank 1 did not answer");
  }
  // The survivor times out 1.5 s after the cut; the attempt ends a second later, the cut node unheard.
  void end_without_the_cut_node() {
    pass(Millis(1500));
    survivor_times_out();
    pass(Millis(1000));
    ASSERT_FALSE(c.jobs.active_attempt(r.attempt));
  }
};

TEST(JobRecovery, AGangEndsWithoutACutOffNodeOnceItGoesUnheardAndFreesTheNodesThatWereHeard) {
  CutNode t;
  t.pass(Millis(1500));
  t.survivor_times_out();
  ASSERT_EQ(t.c.agents[t.lost]->kills().size(), 1u) << "its rank is stopped like any other";
  t.pass(Millis(500));
  ASSERT_TRUE(t.c.jobs.active_attempt(t.r.attempt)) << "unheard for two heartbeats, not more: it may still answer";
  t.pass(Millis(500));
  ASSERT_FALSE(t.c.jobs.active_attempt(t.r.attempt)) << "unheard for longer: the attempt ends without it";
  const Attempt failed = t.ended_attempt();
  EXPECT_EQ(failed.state, AttemptState::failed);
  EXPECT_TRUE(failed.infrastructure);
  EXPECT_EQ(failed.ended_at, test_epoch() + Millis(2500)) << "not at the node timeout (5 s)";
  EXPECT_EQ(t.c.jobs.node(t.survivor)->free_cores, 8) << "the node that was heard is free at once";
  EXPECT_EQ(t.c.jobs.node(t.lost)->free_cores, 0) << "the cut node may still run the rank";
  EXPECT_NE(t.c.jobs.node(t.lost)->node.state, NodeState::down) << "DOWN is still the node timeout's call";
  const Job* job = t.c.jobs.active_job(t.r.job.id);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->state, JobState::pending);
  EXPECT_THAT(job->reason, HasSubstr("waits up to 2500 ms for the nodes not heard from to have surely stopped it"));
}

// The cut node's fence stops its rank by the node timeout after it was last heard (fence_timing.h):
// not before the node is DOWN does the job start again, though its retry backoff ended sooner.
TEST(JobRecovery, TheNextAttemptOfAGangThatEndedWithoutACutOffNodeWaitsOutThatNodesFence) {
  CutNode t;
  ASSERT_NO_FATAL_FAILURE(t.end_without_the_cut_node());
  ASSERT_EQ(t.c.stored_job(t.r.job.id)->not_before, test_epoch() + Millis(5000))
      << "stored: a restarted daemon waits too";
  t.pass(Millis(2500));  // 5 s: the backoff is over; the node is not yet past its timeout
  ASSERT_EQ(t.c.stored_attempts(t.r.job.id).size(), 1u) << "a second attempt would run beside the first";
  EXPECT_EQ(t.c.jobs.node(t.lost)->free_cores, 0) << "nor does the node take work before it is DOWN";
  t.pass(Millis(500));
  EXPECT_EQ(t.c.jobs.node(t.lost)->node.state, NodeState::down);
  const auto attempts = t.c.stored_attempts(t.r.job.id);
  ASSERT_EQ(attempts.size(), 2u) << t.c.stored_job(t.r.job.id).value_or(Job{}).reason;
  EXPECT_EQ(attempts.back().created_at, test_epoch() + Millis(5500));
  EXPECT_THAT(attempts.back().nodes, ::testing::UnorderedElementsAre(t.survivor, t.spare));
}

// Heard again, the node says what it runs: an ended attempt it still runs is fenced (and keeps its
// cores), one it no longer lists is over, and the job need not wait for the node timeout.
TEST(JobRecovery, ACutOffNodeHeardAgainFreesWhatItNoLongerRuns) {
  CutNode t;
  ASSERT_NO_FATAL_FAILURE(t.end_without_the_cut_node());
  t.c.heartbeat(t.lost, {AttemptReport{t.r.attempt, t.r.job.id, 7, std::nullopt, "forward"}});
  ASSERT_EQ(t.c.agents[t.lost]->kills().size(), 2u);
  EXPECT_THAT(t.c.agents[t.lost]->kills().back().reason, HasSubstr("fenced: attempt is not current"));
  EXPECT_EQ(t.c.jobs.node(t.lost)->free_cores, 0) << "it still runs the rank";
  t.c.heartbeat(t.lost);
  EXPECT_EQ(t.c.jobs.node(t.lost)->free_cores, 8) << "it has stopped it";
  t.pass(Millis(2000));  // 4.5 s: the retry backoff is over
  const auto attempts = t.c.stored_attempts(t.r.job.id);
  ASSERT_EQ(attempts.size(), 2u) << "nothing runs the first attempt any more";
  EXPECT_EQ(attempts.back().created_at, test_epoch() + Millis(4500));
  EXPECT_THAT(attempts.back().nodes, ::testing::UnorderedElementsAre(t.survivor, t.spare)) << "the cut node is avoided";
}

std::vector<MetricRecord> stored_metrics(Cluster& c, JobId job) {
  std::vector<MetricRecord> out;
  bool done = false;
  c.worker.read(
      [&](store::Store& s) {
        return StoreWorker::Continuation([&, list = s.metrics_of(job)] {
          out = list;
          done = true;
        });
      },
      [](const Error& error) { ADD_FAILURE() << error.message; });
  c.io.run_until([&done] { return done; });
  return out;
}

// When rank 0's node is lost, rank 1 saves the steps since the last periodic checkpoint
// (neuron/trainer.h, saves_at_peer_loss) and reports it before its exit: the daemon records it,
// though rank 0 alone speaks for the job's metrics, and the resume starts there.
TEST(JobRecovery, ASurvivorsCheckpointAtTheLossIsWhereTheResumeStarts) {
  Cluster c;
  connect_nodes(c, 3);
  JobSpec spec = command_spec(2);
  spec.kind = JobKind::simulated;
  const RunningJob r = start_job(c, spec);
  const std::string lost = r.nodes.at(0), survivor = r.nodes.at(1);
  const LaunchMsg rank0 = c.agents[lost]->launches().back(), rank1 = c.agents[survivor]->launches().back();
  ASSERT_FALSE(rank1.checkpoint_dir.empty());
  report_checkpoint(c, lost, rank0, 20);  // the periodic one

  c.jobs.agent_gone(lost, c.agents[lost].get());
  c.settle();
  MetricsMsg steps{r.attempt, {StepMetric{27, 0.5, 1, 1, 1e-3, 100, false, std::nullopt}}, {}};
  c.send(survivor, steps);
  EXPECT_TRUE(stored_metrics(c, r.job.id).empty()) << "rank 1's steps were taken for the job's";
  report_checkpoint(c, survivor, rank1, 27);
  AttemptExitedMsg exit{r.attempt, 1, std::nullopt, "collective_timeout: rank 0 closed the connection", 27, ""};
  exit.peer_closed_rank = 0;
  c.send(survivor, exit);
  pass_time(c, Millis(2000));

  const auto attempts = c.stored_attempts(r.job.id);
  ASSERT_EQ(attempts.size(), 2u);
  ASSERT_TRUE(attempts.back().resumed_from);
  EXPECT_EQ(fs::path(*attempts.back().resumed_from).filename(), checkpoint::step_dir_name(27));
}

}  // namespace
}  // namespace trainyard::daemon::testing
