#include <gtest/gtest.h>

#include <cmath>

#include "scheduler/fair_share.h"

namespace trainyard::scheduler {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

TEST(FairShareMath, UsageHalvesEveryHalfLife) {
  EXPECT_DOUBLE_EQ(decayed_usage(1000, 0, hours(1), hours(1)), 500);
  EXPECT_NEAR(decayed_usage(1000, 0, hours(3), hours(1)), 125, 1e-9);
}

TEST(FairShareMath, AccrualDoesNotDependOnHowOftenItIsAdvanced) {
  const double once = decayed_usage(0, 8, hours(2), hours(1));
  double stepwise = 0;
  for (int i = 0; i < 7200; ++i) stepwise = decayed_usage(stepwise, 8, seconds(1), hours(1));
  EXPECT_NEAR(once, stepwise, once * 1e-9);
  // Far below a half-life the decay is negligible: 8 cores for 10 s are 80 core-seconds.
  EXPECT_NEAR(decayed_usage(0, 8, seconds(10), hours(24 * 7)), 80, 1e-3);
}

TEST(FairShareMath, FactorFollowsSlurmsFormula) {
  // Nobody has used anything yet: everyone is at 1.
  EXPECT_DOUBLE_EQ(fair_share_factor(0, 0, 1, 2), 1.0);
  // Used exactly its share (half the usage with half the weight): 2^-1.
  EXPECT_DOUBLE_EQ(fair_share_factor(50, 100, 1, 2), 0.5);
  // Used everything with a third of the weight: 2^-3.
  EXPECT_DOUBLE_EQ(fair_share_factor(100, 100, 1, 3), 0.125);
  EXPECT_DOUBLE_EQ(fair_share_factor(0, 100, 1, 3), 1.0);
}

}  // namespace
}  // namespace trainyard::scheduler
