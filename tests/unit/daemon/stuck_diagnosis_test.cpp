#include <gtest/gtest.h>

#include "daemon/stuck_diagnosis.h"

namespace trainyard::daemon {
namespace {

using namespace std::chrono_literals;

TEST(StuckDiagnosis, AnAttemptWithARankThatAdvancedRecentlyIsNotStuck) {
  const std::vector<RankProgress> ranks = {{0, "a", 10, "all-reduce", 5000ms}, {1, "b", 11, "forward", 200ms}};
  EXPECT_FALSE(diagnose_stuck(ranks, 2000ms));
  EXPECT_FALSE(diagnose_stuck({}, 2000ms));
}

TEST(StuckDiagnosis, NamesTheRankThatHangsInComputeNotTheOnesWaitingForIt) {
  const std::vector<RankProgress> ranks = {{0, "trn-0", 412, "all-reduce", 2100ms},
                                           {1, "trn-1", 412, "all-reduce", 2100ms},
                                           {2, "trn-2", 412, "all-reduce", 2050ms},
                                           {3, "trn-3", 412, "forward", 2300ms}};
  const auto d = diagnose_stuck(ranks, 2000ms);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->culprits, std::vector<int>{3});
  EXPECT_EQ(d->text,
            "no training progress for 2s: rank 3 (trn-3) blocked in forward at step 412; ranks 0,1,2 "
            "(trn-0,trn-1,trn-2) waiting in all-reduce at step 412");
}

TEST(StuckDiagnosis, ARankThatFellBehindIsTheCulpritWhateverItsPhase) {
  const std::vector<RankProgress> ranks = {{0, "a", 40, "all-reduce", 3000ms}, {1, "b", 39, "all-reduce", 3000ms}};
  const auto d = diagnose_stuck(ranks, 2000ms);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->culprits, std::vector<int>{1});
}

TEST(StuckDiagnosis, EveryoneInsideACollectiveIsNamed) {
  const std::vector<RankProgress> ranks = {{0, "a", 7, "all-reduce", 3000ms}, {1, "b", 7, "all-reduce", 3000ms}};
  const auto d = diagnose_stuck(ranks, 2000ms);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->culprits, (std::vector<int>{0, 1}));
  EXPECT_NE(d->text.find("ranks 0,1 (a,b) blocked in all-reduce at step 7"), std::string::npos) << d->text;
}

TEST(StuckDiagnosis, AnUnreportedPhaseSaysSo) {
  const auto d = diagnose_stuck({{0, "a", 0, "", 1900000ms}}, 1800000ms);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->text, "no training progress for 1800s: rank 0 (a) blocked in an unreported phase at step 0");
}

}  // namespace
}  // namespace trainyard::daemon
