// The node registry on its own: registration, heartbeat bookkeeping, state transitions and the
// scheduler's view of each node, with fake agents and a manual clock.
#include "daemon/nodes/node_registry.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

struct Registry {
  ManualTimeSource clock{test_epoch()};
  scheduler::Scheduler scheduler{scheduler::Config{}};
  std::set<std::string> under_test;
  NodeRegistry nodes{clock, scheduler, [this](const std::string& node) { return under_test.contains(node); }};

  std::shared_ptr<FakeAgent> connect(const std::string& name, bool needs_check = false) {
    auto agent = std::make_shared<FakeAgent>();
    HelloMsg hello;
    hello.name = name;
    hello.cores = 8;
    hello.agent_version = "test-agent";
    hello.data_addr = "10.0.0.1:7000";
    nodes.register_agent(hello, agent, needs_check);
    return agent;
  }
  // Whether the scheduler would place a one-node job on some node now.
  bool schedulable() {
    static JobId next = 0;
    scheduler.queue(scheduler::PendingJob{.id = ++next, .submitted_at = clock.system_now()});
    const bool started = !scheduler.schedule(clock.system_now()).starts.empty();
    if (started) {
      scheduler.finish(next, clock.system_now());
    } else {
      scheduler.remove(next);
    }
    return started;
  }
  NodeState state(const std::string& name) const { return nodes.find(name)->node.state; }
};

// What submissions check a job against (job_fit.h), kept as nodes come, come back and change.
TEST(NodeRegistry, CountsNodesByCoresAsTheyRegisterRestoreAndChange) {
  Registry r;
  EXPECT_TRUE(r.nodes.nodes_by_cores().empty());
  Node stored;
  stored.name = "old";
  stored.cores = 16;
  r.nodes.restore({stored});
  r.connect("n1");
  r.connect("n2");
  EXPECT_EQ(r.nodes.nodes_by_cores(), (NodeCoreCounts{{8, 2}, {16, 1}}));
  r.connect("n1");  // reconnects, unchanged
  EXPECT_EQ(r.nodes.nodes_by_cores(), (NodeCoreCounts{{8, 2}, {16, 1}}));
  HelloMsg bigger;
  bigger.name = "old";
  bigger.cores = 32;
  r.nodes.register_agent(bigger, std::make_shared<FakeAgent>(), false);
  EXPECT_EQ(r.nodes.nodes_by_cores(), (NodeCoreCounts{{8, 2}, {32, 1}})) << "the restored node came back with more cores";
}

TEST(NodeRegistry, ANewNodeIsHealthyConnectedAndRecordedWithItsEvent) {
  Registry r;
  auto agent = std::make_shared<FakeAgent>();
  HelloMsg hello;
  hello.name = "n1";
  hello.cores = 8;
  hello.agent_version = "v1";
  const auto registration = r.nodes.register_agent(hello, agent, false);
  EXPECT_FALSE(registration.gated);
  ASSERT_EQ(registration.change.nodes.size(), 1u);
  EXPECT_EQ(registration.change.nodes[0].state, NodeState::healthy);
  EXPECT_TRUE(registration.change.nodes[0].connected);
  ASSERT_EQ(registration.change.events.size(), 1u);
  EXPECT_EQ(registration.change.events[0].kind, "node.registered");
  EXPECT_TRUE(r.schedulable());
  EXPECT_EQ(r.nodes.view("n1")->free_cores, 8);
}

TEST(NodeRegistry, ANodeThatNeedsItsCheckIsSuspectAndTakesNoWork) {
  Registry r;
  r.connect("n1", true);
  EXPECT_EQ(r.state("n1"), NodeState::suspect);
  EXPECT_FALSE(r.schedulable());
}

TEST(NodeRegistry, ADrainedNodeStaysDrainedWhenItReconnects) {
  Registry r;
  r.connect("n1");
  r.nodes.drain("n1", "maintenance");
  const auto registration = r.nodes.register_agent(HelloMsg{.name = "n1", .cores = 8}, std::make_shared<FakeAgent>(), true);
  EXPECT_FALSE(registration.gated);
  EXPECT_EQ(r.state("n1"), NodeState::drained);
}

TEST(NodeRegistry, ANewConnectionReplacesTheOldOneAndOnlyItIsHeard) {
  Registry r;
  auto old_agent = r.connect("n1");
  auto new_agent = r.connect("n1");
  EXPECT_TRUE(old_agent->disconnected);
  EXPECT_FALSE(r.nodes.heard_from("n1", old_agent.get()));
  EXPECT_FALSE(r.nodes.disconnected("n1", old_agent.get()));
  EXPECT_TRUE(r.nodes.connected("n1"));
  EXPECT_TRUE(r.nodes.heard_from("n1", new_agent.get()));
}

TEST(NodeRegistry, ANodeSilentPastTheTimeoutIsNamedUntilItIsDown) {
  Registry r;
  auto agent = r.connect("n1");
  r.connect("n2");
  r.clock.advance(Millis(4000));
  r.nodes.heard_from("n1", agent.get());
  r.clock.advance(Millis(2000));
  const auto silent = r.nodes.silent_nodes(r.clock.monotonic_now(), Millis(5000));
  ASSERT_EQ(silent.size(), 1u);
  EXPECT_EQ(silent[0].first, "n2");
  EXPECT_EQ(silent[0].second, Millis(6000));

  const store::Change change = r.nodes.mark_down("n2", "sent no heartbeat");
  EXPECT_EQ(change.nodes.at(0).state, NodeState::down);
  EXPECT_EQ(change.events.at(0).kind, "node.down");
  EXPECT_FALSE(r.nodes.connected("n2"));
  EXPECT_TRUE(r.nodes.silent_nodes(r.clock.monotonic_now(), Millis(5000)).empty());
}

TEST(NodeRegistry, ADownNodeThatReconnectsIsHealthyAgain) {
  Registry r;
  r.connect("n1");
  r.nodes.mark_down("n1", "gone");
  r.connect("n1");
  EXPECT_EQ(r.state("n1"), NodeState::healthy);
  EXPECT_EQ(r.nodes.find("n1")->node.state_reason, "reconnected");
}

TEST(NodeRegistry, UndrainOfADrainedNodeNeedsNoCheck) {
  Registry r;
  r.connect("n1");
  r.nodes.drain("n1", "maintenance");
  EXPECT_FALSE(r.schedulable());
  bool checked = false;
  const auto [change, check] = r.nodes.undrain("n1", "alice", [&] {
    checked = true;
    return std::int64_t{7};
  });
  EXPECT_FALSE(checked);
  EXPECT_FALSE(check);
  EXPECT_EQ(r.state("n1"), NodeState::healthy);
  EXPECT_EQ(change.events.at(0).kind, "node.undrained");
  EXPECT_TRUE(r.schedulable());
}

TEST(NodeRegistry, UndrainOfAnUnhealthyNodeIsSuspectUntilItsCheckPasses) {
  Registry r;
  r.connect("n1");
  store::Change ignored;
  r.nodes.mark_suspect("n1", "canary failed", Json::object(), ignored);
  const auto [change, check] = r.nodes.undrain("n1", "alice", [] { return std::int64_t{7}; });
  EXPECT_EQ(check, 7);
  EXPECT_EQ(r.state("n1"), NodeState::suspect);
  EXPECT_EQ(change.events.at(0).details["health_check_id"], 7);
}

TEST(NodeRegistry, ANodeUnderTestTakesNoWorkUntilSynced) {
  Registry r;
  r.connect("n1");
  r.under_test.insert("n1");
  r.nodes.sync("n1");
  EXPECT_FALSE(r.schedulable());
  r.under_test.clear();
  r.nodes.sync("n1");
  EXPECT_TRUE(r.schedulable());
}

TEST(NodeRegistry, HeldCoresAreFreeAgainWhenReleased) {
  Registry r;
  r.connect("n1");
  r.connect("n2");
  r.nodes.hold(5, {"n1", "n2"}, 3);
  EXPECT_EQ(r.nodes.view("n1")->free_cores, 5);
  EXPECT_EQ(r.nodes.view("n2")->attempts, std::vector<AttemptId>{5});
  r.nodes.release(5, {"n1", "n2"}, 3);
  EXPECT_EQ(r.nodes.view("n1")->free_cores, 8);
  EXPECT_TRUE(r.nodes.view("n2")->attempts.empty());
}

TEST(NodeRegistry, RestoredNodesAreDisconnectedWithOneTimeoutToComeBack) {
  Registry r;
  Node stored;
  stored.name = "n1";
  stored.cores = 8;
  stored.state = NodeState::healthy;
  stored.connected = true;
  r.clock.advance(Millis(60000));
  r.nodes.restore({stored});
  EXPECT_FALSE(r.nodes.connected("n1"));
  EXPECT_FALSE(r.nodes.find("n1")->node.connected);
  EXPECT_FALSE(r.schedulable());
  EXPECT_TRUE(r.nodes.silent_nodes(r.clock.monotonic_now() + Millis(5000), Millis(5000)).empty());
  EXPECT_EQ(r.nodes.silent_nodes(r.clock.monotonic_now() + Millis(5001), Millis(5000)).size(), 1u);
}

TEST(NodeRegistry, SendsOnlyToConnectedNodes) {
  Registry r;
  auto agent = r.connect("n1");
  EXPECT_TRUE(r.nodes.send("n1", KillMsg{1, "x", 0}));
  EXPECT_EQ(agent->kills().size(), 1u);
  r.nodes.disconnected("n1", agent.get());
  EXPECT_FALSE(r.nodes.send("n1", KillMsg{1, "x", 0}));
  EXPECT_FALSE(r.nodes.send("n9", KillMsg{1, "x", 0}));
  EXPECT_FALSE(r.nodes.data_addr("n1"));
}

}  // namespace
}  // namespace trainyard::daemon::testing
