#include <gtest/gtest.h>

#include "daemon/stuck_diagnosis.h"

namespace trainyard::daemon {
namespace {

using namespace std::chrono_literals;

RankProgress rank(int r, std::string node, std::int64_t step, std::string phase, Millis silent, Millis allowed = 2000ms) {
  return {r, std::move(node), step, std::move(phase), silent, Allowance{allowed, "the test's"}};
}

TEST(StuckDiagnosis, RanksWithinTheirAllowanceAreNotStuck) {
  const std::vector<RankProgress> ranks = {rank(0, "a", 10, "all-reduce", 1900ms), rank(1, "b", 11, "forward", 200ms)};
  EXPECT_FALSE(diagnose_stuck(ranks));
  EXPECT_FALSE(diagnose_stuck({}));
}

TEST(StuckDiagnosis, NamesTheRankThatHangsInComputeNotTheOnesWaitingForIt) {
  const std::vector<RankProgress> ranks = {rank(0, "trn-0", 412, "all-reduce", 2100ms),
                                           rank(1, "trn-1", 412, "all-reduce", 2100ms),
                                           rank(2, "trn-2", 412, "all-reduce", 2050ms),
                                           rank(3, "trn-3", 412, "forward", 2300ms)};
  const auto d = diagnose_stuck(ranks);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->culprits, std::vector<int>{3});
  EXPECT_EQ(d->text,
            "no training progress for 2s: rank 3 (trn-3) blocked in forward at step 412; ranks 0,1,2 "
            "(trn-0,trn-1,trn-2) waiting in all-reduce at step 412 (allowed: the test's)");
}

TEST(StuckDiagnosis, ARankThatStopsWhileTheOthersAdvanceIsStuckAndTheOthersAreNamedAdvancing) {
  // A data-loader rank or a pipeline stage: the others do not wait on it every step.
  const std::vector<RankProgress> ranks = {rank(0, "a", 900, "forward", 100ms), rank(1, "b", 35, "load", 2500ms),
                                           rank(2, "c", 901, "backward", 50ms)};
  const auto d = diagnose_stuck(ranks);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->culprits, std::vector<int>{1});
  EXPECT_EQ(d->text.rfind("no training progress for 2s: rank 1 (b) blocked in load at step 35; ", 0), 0u) << d->text;
  EXPECT_NE(d->text.find("rank 0 (a) still advancing, last in forward at step 900"), std::string::npos) << d->text;
  EXPECT_NE(d->text.find("rank 2 (c) still advancing, last in backward at step 901"), std::string::npos) << d->text;
}

TEST(StuckDiagnosis, EachRankIsJudgedByItsOwnAllowance) {
  // Rank 0 is in a long checkpoint with a 10-minute allowance; rank 1 stopped past its 30 s.
  const std::vector<RankProgress> ranks = {rank(0, "a", 50, "checkpoint", 60000ms, 600000ms),
                                           rank(1, "b", 50, "forward", 31000ms, 30000ms)};
  const auto d = diagnose_stuck(ranks);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->culprits, std::vector<int>{1});
  EXPECT_FALSE(diagnose_stuck({rank(0, "a", 50, "checkpoint", 60000ms, 600000ms)}));
}

TEST(StuckDiagnosis, ARankWaitingInACollectiveThatStoppedFirstBlamesTheRankItWaitsFor) {
  // Rank 0 finished step 24 a heartbeat before rank 1 hung in its forward pass: rank 0's silence
  // passes the allowance first, but it waits in all-reduce for rank 1, at the same step.
  const std::vector<RankProgress> ranks = {rank(0, "a", 24, "all-reduce", 2050ms), rank(1, "b", 24, "forward", 1950ms)};
  const auto d = diagnose_stuck(ranks);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->culprits, std::vector<int>{1});
  EXPECT_NE(d->text.find("rank 1 (b) blocked in forward at step 24; rank 0 (a) waiting in all-reduce at step 24"),
            std::string::npos)
      << d->text;
}

TEST(StuckDiagnosis, ARankThatFellBehindIsTheCulpritWhateverItsPhase) {
  const std::vector<RankProgress> ranks = {rank(0, "a", 40, "all-reduce", 3000ms), rank(1, "b", 39, "all-reduce", 3000ms)};
  const auto d = diagnose_stuck(ranks);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->culprits, std::vector<int>{1});
}

TEST(StuckDiagnosis, EveryoneInsideACollectiveIsNamed) {
  const std::vector<RankProgress> ranks = {rank(0, "a", 7, "all-reduce", 3000ms), rank(1, "b", 7, "all-reduce", 3000ms)};
  const auto d = diagnose_stuck(ranks);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->culprits, (std::vector<int>{0, 1}));
  EXPECT_NE(d->text.find("ranks 0,1 (a,b) blocked in all-reduce at step 7"), std::string::npos) << d->text;
}

TEST(StuckDiagnosis, AnUnreportedPhaseSaysSo) {
  const auto d = diagnose_stuck({rank(0, "a", 0, "", 1900000ms, 1800000ms)});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->text, "no training progress for 1800s: rank 0 (a) blocked in an unreported phase at step 0 (allowed: the test's)");
}

}  // namespace
}  // namespace trainyard::daemon
