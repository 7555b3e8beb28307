// The recovery policy (daemon/policy/recovery.h): pure, on explicit times.
#include "daemon/policy/recovery.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace trainyard::daemon {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const MonoTime kClosed{std::chrono::seconds(100)};
const TimePoint kRecoveryNow = from_unix_ms(1'800'000'000'000);
constexpr Millis kGrace{2000};

TEST(Recovery, ADisconnectedNodeIsLostWhenTheGraceEndsOrAPeerSawItClose) {
  const RecoveryConfig config{.disconnect_grace = kGrace};
  EXPECT_EQ(node_loss({kClosed, false, false}, kClosed + Millis(1999), config), NodeLoss::none);
  EXPECT_EQ(node_loss({kClosed, false, false}, kClosed + kGrace, config), NodeLoss::grace_over);
  EXPECT_EQ(node_loss({kClosed, true, false}, kClosed, config), NodeLoss::peer_saw_close)
      << "a peer saw its data plane close: no grace to wait";
  EXPECT_EQ(node_loss({std::nullopt, true, false}, kClosed + Millis(60'000), config), NodeLoss::none)
      << "a connected node is never lost by a peer's word alone";
  EXPECT_EQ(node_loss({kClosed, false, false}, kClosed, RecoveryConfig{.disconnect_grace = Millis(0)}), NodeLoss::grace_over)
      << "a grace of 0 trusts the close at once";
}

// A peer's word says the agent is gone, not that what its fence keeper is stopping has stopped: a
// rank's process group has the kill grace after SIGTERM.
TEST(Recovery, NoDisconnectedNodeIsLostBeforeItsAttemptsAreSurelyStopped) {
  const RecoveryConfig config{.disconnect_grace = kGrace, .stopped_within = stopped_within_after(Millis(500))};
  EXPECT_EQ(config.stopped_within, Millis(750));
  EXPECT_EQ(node_loss({kClosed, true, false}, kClosed + Millis(749), config), NodeLoss::none);
  EXPECT_EQ(node_loss({kClosed, true, false}, kClosed + Millis(750), config), NodeLoss::peer_saw_close);
  EXPECT_EQ(node_loss({kClosed, false, false}, kClosed + Millis(750), config), NodeLoss::none) << "nor does it shorten the grace";
  const RecoveryConfig long_grace{.disconnect_grace = Millis(1000), .stopped_within = stopped_within_after(Millis(10'000))};
  EXPECT_EQ(long_grace.stopped_within, Millis(12'500));
  EXPECT_EQ(node_loss({kClosed, false, false}, kClosed + Millis(12'499), long_grace), NodeLoss::none)
      << "the grace does not cut it short";
  EXPECT_EQ(node_loss({kClosed, false, false}, kClosed + Millis(12'500), long_grace), NodeLoss::grace_over);
}

// The keeper's report stands in for the time its stop may take, not for the signs that the agent
// is gone for good: a peer's close still loses the node at once, and without one the grace is
// waited out, which lets a surviving rank see the close and save its state first.
TEST(Recovery, AKeepersReportStandsInForTheTimeItsStopMayTake) {
  const RecoveryConfig config{.disconnect_grace = kGrace, .stopped_within = stopped_within_after(Millis(30'000))};
  EXPECT_EQ(node_loss({kClosed, true, true}, kClosed, config), NodeLoss::peer_saw_close);
  EXPECT_EQ(node_loss({kClosed, false, true}, kClosed + Millis(1999), config), NodeLoss::none);
  EXPECT_EQ(node_loss({kClosed, false, true}, kClosed + kGrace, config), NodeLoss::grace_over);
  EXPECT_EQ(node_loss({std::nullopt, true, true}, kClosed, config), NodeLoss::none)
      << "still connected: the close is yet to be heard";
  EXPECT_EQ(node_loss({kClosed, true, false}, kClosed + Millis(37'499), config), NodeLoss::none)
      << "without it, a 30 s kill grace and its quarter are waited out";
}

// A killed agent's connection closes at once; its peer rank, a real job's, sees only "connection
// reset" and exits 1 a moment later: the lost node, not the survivor, explains the attempt's end.
TEST(Recovery, ALostNodeThatWentQuietBeforeAnotherRanksFailureIsBlamed) {
  constexpr Millis kHeartbeat{500};
  const MonoTime heard = kClosed - Millis(400);
  EXPECT_TRUE(lost_node_went_first(kClosed, heard, kHeartbeat, kClosed + Millis(150)));
  EXPECT_TRUE(lost_node_went_first(kClosed, heard, kHeartbeat, std::nullopt)) << "nothing failed before it";
  // Still connected but silent (a cut link): quiet once a heartbeat is overdue.
  EXPECT_TRUE(lost_node_went_first(std::nullopt, heard, kHeartbeat, heard + Millis(3000)));
  // A rank that failed on its own (an OOM) while the node was still heard keeps the blame, even if
  // the node is lost afterwards.
  EXPECT_FALSE(lost_node_went_first(std::nullopt, heard, kHeartbeat, heard + Millis(200)));
  EXPECT_FALSE(lost_node_went_first(heard + Millis(2000), heard, Millis(5000), heard + Millis(1000)));
}

TEST(Recovery, AResumeTestsOnlyNodesThatAreNeitherSurvivorsNorWarm) {
  const Millis warm_for{300'000};
  const std::vector<ResumeNode> nodes = {
      {"survivor", true, std::nullopt},
      {"warm", false, kRecoveryNow - Millis(299'000)},
      {"stale", false, kRecoveryNow - Millis(301'000)},
      {"never-checked", false, std::nullopt},
  };
  EXPECT_THAT(unproven_nodes(nodes, kRecoveryNow, warm_for), ElementsAre("stale", "never-checked"));
  EXPECT_THAT(unproven_nodes({nodes[0], nodes[1]}, kRecoveryNow, warm_for), IsEmpty());
}

TEST(Recovery, AResumeTakesSurvivorsThenSparesAndNeverOneNodeTwice) {
  const auto usable = [](const std::string& name) { return name != "busy"; };
  EXPECT_THAT(resume_nodes({"s1"}, {"busy", "w1", "w2"}, 2, usable), ::testing::Optional(ElementsAre("s1", "w1")));
  // The survivor's rank ended first, and its idle node was made a spare before the loss was found.
  EXPECT_THAT(resume_nodes({"s1"}, {"s1", "w1"}, 2, usable), ::testing::Optional(ElementsAre("s1", "w1")));
  EXPECT_EQ(resume_nodes({"s1"}, {"s1"}, 2, usable), std::nullopt) << "one node cannot hold two ranks of a gang";
  EXPECT_EQ(resume_nodes({"busy"}, {"w1"}, 2, usable), std::nullopt);
}

TEST(Recovery, WarmSparesAreTheFreshestIdleNodesRetestedAtHalfTheirWarmth) {
  const Millis warm_for{300'000};
  const std::vector<SpareCandidate> idle = {
      {"a", kRecoveryNow - Millis(200'000)},  // past half of warm_for: tested again
      {"b", kRecoveryNow - Millis(10'000)},
      {"c", std::nullopt},
      {"d", kRecoveryNow - Millis(100'000)},
  };
  const SparePlan two = plan_warm_spares(idle, 2, kRecoveryNow, warm_for);
  EXPECT_THAT(two.spares, ElementsAre("b", "d"));
  EXPECT_THAT(two.to_test, IsEmpty());
  const SparePlan four = plan_warm_spares(idle, 4, kRecoveryNow, warm_for);
  EXPECT_THAT(four.spares, ElementsAre("b", "d", "a", "c"));
  EXPECT_THAT(four.to_test, ElementsAre("a", "c"));
  EXPECT_THAT(plan_warm_spares(idle, 0, kRecoveryNow, warm_for).spares, IsEmpty());
  std::vector<SpareCandidate> testing = idle;
  testing[2].under_test = true;
  EXPECT_THAT(plan_warm_spares(testing, 4, kRecoveryNow, warm_for).to_test, ElementsAre("a"))
      << "c's check already runs";
  EXPECT_EQ(plan_warm_spares(idle, 9, kRecoveryNow, warm_for).spares.size(), 4u) << "no more spares than idle nodes";
}

}  // namespace
}  // namespace trainyard::daemon
