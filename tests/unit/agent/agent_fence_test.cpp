// Fencing (agent/agent.h): the agent stops its attempts once no heartbeat has been acknowledged for
// its fence time, leaves a daemon that stops answering, and keeps its fence keeper told.
#include <gtest/gtest.h>

#include "agent/agent.h"
#include "tests/unit/agent/agent_harness.h"

namespace trainyard::agent::testing {
namespace {

// Fencing (agent/agent.h): welcomed with a 1 s fence and 100 ms heartbeats.
class AgentFenceTest : public AgentTest {
 protected:
  FakeLink& fenced_link() {
    agent_->start();
    FakeLink& link = links_.last();
    link.open();
    WelcomeMsg welcome{"test", 100, ""};
    welcome.fence_after_ms = 1000;
    link.deliver(welcome);
    return link;
  }
  // Acknowledges every heartbeat sent on `link` so far.
  static void ack_all(FakeLink& link) {
    for (const auto& hb : link.sent_of<HeartbeatMsg>()) link.deliver(HeartbeatAckMsg{hb.seq});
  }
};

TEST_F(AgentFenceTest, AnAcknowledgedNodeKeepsItsAttempts) {
  FakeLink& link = fenced_link();
  link.deliver(command_launch(7));
  for (int i = 0; i < 50; ++i) {
    timers_.advance(milliseconds(100));
    ack_all(link);
  }
  ASSERT_EQ(workloads_.runs.size(), 1u);
  EXPECT_TRUE(workloads_.runs[0]->terminations.empty()) << "5 s of acknowledged heartbeats";
  const auto heartbeats = link.sent_of<HeartbeatMsg>();
  ASSERT_GE(heartbeats.size(), 2u);
  EXPECT_LT(heartbeats[0].seq, heartbeats[1].seq) << "numbered";
}

TEST_F(AgentFenceTest, ANodeWhoseHeartbeatsGoUnacknowledgedStopsItsAttemptsAtTheFenceTime) {
  FakeLink& link = fenced_link();
  link.deliver(command_launch(7));
  timers_.advance(milliseconds(300));
  ack_all(link);  // the heartbeat sent at 300 ms is the last the daemon hears
  const std::size_t heard = link.sent_of<HeartbeatMsg>().size();
  // The daemon keeps sending (a one-way cut): a launch or log request is not an ack.
  link.deliver(LogRequestMsg{1, 7, 10, 1000});
  timers_.advance(milliseconds(999));
  EXPECT_TRUE(workloads_.runs[0]->terminations.empty()) << "within the fence time of the last acked send";
  timers_.advance(milliseconds(1));
  ASSERT_EQ(workloads_.runs[0]->terminations.size(), 1u) << "fenced 1 s after the acked heartbeat was sent";
  EXPECT_EQ(workloads_.runs[0]->terminations[0].rfind("fenced: the daemon acknowledged no heartbeat", 0), 0u)
      << workloads_.runs[0]->terminations[0];
  EXPECT_EQ(workloads_.runs[0]->kills, 0);
  // Then the launch's kill grace (10 s by default), then SIGKILL.
  timers_.advance(milliseconds(10000));
  EXPECT_EQ(workloads_.runs[0]->kills, 1);
  EXPECT_GT(link.sent_of<HeartbeatMsg>().size(), heard) << "it goes on heartbeating";
}

TEST_F(AgentFenceTest, AStaleAckOfAnOlderHeartbeatDoesNotExtendTheFence) {
  FakeLink& link = fenced_link();
  link.deliver(command_launch(7));
  timers_.advance(milliseconds(500));
  const auto heartbeats = link.sent_of<HeartbeatMsg>();
  ASSERT_GE(heartbeats.size(), 5u);
  link.deliver(HeartbeatAckMsg{heartbeats[4].seq});  // sent at 500 ms
  link.deliver(HeartbeatAckMsg{heartbeats[0].seq});  // late, sent at 100 ms
  timers_.advance(milliseconds(999));
  EXPECT_TRUE(workloads_.runs[0]->terminations.empty());
  timers_.advance(milliseconds(1));
  EXPECT_EQ(workloads_.runs[0]->terminations.size(), 1u);
}

TEST_F(AgentFenceTest, ALostLinkFencesToo) {
  FakeLink& link = fenced_link();
  link.deliver(command_launch(7));
  link.drop("closed by server with code 1006");
  timers_.advance(milliseconds(999));
  EXPECT_TRUE(workloads_.runs[0]->terminations.empty());
  timers_.advance(milliseconds(1));
  EXPECT_EQ(workloads_.runs[0]->terminations.size(), 1u) << "cut off by a closed link, still fenced";
}

// A paused or cut-off daemon whose connection stays open: the agent leaves it at half the fence
// time, for the next server (a standby that takes over), and is back before it must fence.
TEST_F(AgentFenceTest, ALinkWhoseDaemonStopsAnsweringIsDroppedForTheNextServerBeforeTheFence) {
  use_servers({"http://daemon-a:8080", "http://daemon-b:8080"});
  FakeLink& link = fenced_link();
  link.deliver(command_launch(7));
  for (int i = 0; i < 3; ++i) {
    timers_.advance(milliseconds(100));
    ack_all(link);  // the last ack arrives at 300 ms
  }
  timers_.advance(milliseconds(599));
  EXPECT_FALSE(link.abort_reason) << "half the 1 s fence, and the 100 ms to confirm, have not passed since the last answer";
  timers_.advance(milliseconds(1));
  ASSERT_TRUE(link.abort_reason) << "no answer for half the fence time and a heartbeat interval";
  EXPECT_EQ(*link.abort_reason, "the daemon answered nothing for 600 ms");
  link.drop(*link.abort_reason);
  timers_.advance(milliseconds(100));  // the reconnect backoff
  ASSERT_EQ(links_.opened.size(), 2u);
  FakeLink& standby = links_.last();
  EXPECT_EQ(standby.server, "http://daemon-b:8080") << "a daemon that stopped answering counts as unreachable";
  standby.open();
  WelcomeMsg welcome{"test", 100, ""};
  welcome.fence_after_ms = 1000;
  standby.deliver(welcome);
  for (int i = 0; i < 20; ++i) {
    timers_.advance(milliseconds(100));
    ack_all(standby);
  }
  EXPECT_TRUE(workloads_.runs[0]->terminations.empty()) << "welcomed by the new daemon before the fence time";
  ASSERT_FALSE(standby.sent_of<HelloMsg>().empty());
  EXPECT_EQ(standby.sent_of<HelloMsg>()[0].attempts.size(), 1u) << "it reports the attempt it still runs";
}

TEST_F(AgentFenceTest, AConnectionThatIsNeverWelcomedIsDroppedAtAQuarterOfTheFenceTime) {
  use_servers({"http://daemon-a:8080", "http://daemon-b:8080"});
  FakeLink& link = fenced_link();
  link.drop();
  timers_.advance(milliseconds(100));
  FakeLink& frozen = links_.last();  // accepted by the kernel, never upgraded
  frozen.open();
  timers_.advance(milliseconds(311));
  EXPECT_FALSE(frozen.abort_reason);
  timers_.advance(milliseconds(1));
  ASSERT_TRUE(frozen.abort_reason);
  EXPECT_EQ(*frozen.abort_reason, "the daemon answered nothing for 312 ms") << "250 ms, and a quarter of that to confirm";
}

// An agent stalled past its deadline finds the daemon's answer queued: the answer arrives between
// the deadline and its confirmation, and the link stays.
TEST_F(AgentFenceTest, AnAnswerReadJustAfterTheDeadlineKeepsTheLink) {
  FakeLink& link = fenced_link();
  timers_.advance(milliseconds(100));
  ack_all(link);
  timers_.advance(milliseconds(550));  // past the 500 ms deadline, within its 100 ms confirmation
  ack_all(link);
  timers_.advance(milliseconds(100));
  EXPECT_FALSE(link.abort_reason);
}

TEST_F(AgentFenceTest, AnAnsweringDaemonKeepsTheLink) {
  FakeLink& link = fenced_link();
  for (int i = 0; i < 100; ++i) {
    timers_.advance(milliseconds(100));
    ack_all(link);
  }
  EXPECT_FALSE(link.abort_reason);
  EXPECT_EQ(links_.opened.size(), 1u);
}

TEST_F(AgentFenceTest, ANodeWithoutAFenceTimeNeverFences) {
  FakeLink& unfenced = connected();  // a daemon with --fence-ms 0 sends none
  unfenced.deliver(command_launch(8));
  timers_.advance(milliseconds(60000));
  EXPECT_TRUE(workloads_.runs[0]->terminations.empty());
}

// A frozen agent cannot fence: after every acknowledgement its keeper hears the deadline the agent
// itself would fence at, plus a twentieth of the fence time; after every launch and exit, what runs
// and the longest kill grace.
TEST_F(AgentFenceTest, TheFenceKeeperIsToldEachAcknowledgedDeadlineWhileAttemptsRun) {
  FakeLink& link = fenced_link();
  timers_.advance(milliseconds(100));
  ack_all(link);
  EXPECT_FALSE(keeper_.deadline) << "nothing runs: nothing to stop";
  const auto before_launch = std::chrono::steady_clock::now();
  LaunchMsg launch = command_launch(7);
  launch.preempt_grace_ms = 2500;
  link.deliver(launch);
  ASSERT_TRUE(keeper_.deadline) << "the launch itself tells the keeper, not only the next ack";
  EXPECT_EQ(keeper_.attempts, std::vector<AttemptId>{7});
  EXPECT_EQ(keeper_.grace, milliseconds(2500));

  timers_.advance(milliseconds(100));
  const auto sent = std::chrono::steady_clock::now();
  const auto heartbeats = link.sent_of<HeartbeatMsg>();
  link.deliver(HeartbeatAckMsg{heartbeats.back().seq});
  const auto told = *keeper_.deadline;
  // Sent between `before_launch` and `sent` (real steady time; the fake timers only order events).
  EXPECT_GE(told, before_launch + milliseconds(1050));
  EXPECT_LE(told, sent + milliseconds(1050));

  // A stale ack of an older heartbeat moves nothing.
  const int times = keeper_.told;
  link.deliver(HeartbeatAckMsg{heartbeats.front().seq});
  EXPECT_EQ(keeper_.told, times);

  workloads_.runs[0]->exit(exit_code(0));
  settle();
  EXPECT_FALSE(keeper_.deadline) << "its last attempt ended: nothing to stop";
  EXPECT_TRUE(keeper_.attempts.empty());
}

// Should the agent die, its keeper stops what it ran and tells the daemon so: it must know what
// runs even where the node does not fence.
TEST_F(AgentFenceTest, WithoutAFenceTimeTheKeeperHasNoDeadlineButKnowsWhatRuns) {
  FakeLink& link = connected();
  LaunchMsg first = command_launch(7);
  first.preempt_grace_ms = 1500;
  link.deliver(first);
  LaunchMsg second = command_launch(8);
  second.preempt_grace_ms = 4000;
  link.deliver(second);
  timers_.advance(milliseconds(3000));
  for (const auto& hb : link.sent_of<HeartbeatMsg>()) link.deliver(HeartbeatAckMsg{hb.seq});
  EXPECT_FALSE(keeper_.deadline);
  EXPECT_EQ(keeper_.attempts, (std::vector<AttemptId>{7, 8}));
  EXPECT_EQ(keeper_.grace, milliseconds(4000)) << "the longest grace of what runs";

  const int times = keeper_.told;
  timers_.advance(milliseconds(3000));
  for (const auto& hb : link.sent_of<HeartbeatMsg>()) link.deliver(HeartbeatAckMsg{hb.seq});
  EXPECT_EQ(keeper_.told, times) << "acks change nothing the keeper needs to hear without a fence";

  workloads_.runs[1]->exit(exit_code(0));
  settle();
  EXPECT_EQ(keeper_.attempts, std::vector<AttemptId>{7});
  EXPECT_EQ(keeper_.grace, milliseconds(1500));
}

}  // namespace
}  // namespace trainyard::agent::testing
