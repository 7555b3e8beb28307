// The daemon's own pauses seen from its tick (daemon/own_pauses.h), on explicit times.
#include "daemon/own_pauses.h"

#include <gtest/gtest.h>

namespace trainyard::daemon {
namespace {

const MonoTime kFirstTick{std::chrono::seconds(1000)};

TEST(OwnPauses, TicksOnTimeOrSomewhatLateAreNoPause) {
  OwnPauses pauses(Millis(500));
  EXPECT_EQ(pauses.observe(kFirstTick), Millis(0)) << "the first tick has nothing to compare with";
  EXPECT_EQ(pauses.observe(kFirstTick + Millis(500)), Millis(0));
  EXPECT_EQ(pauses.observe(kFirstTick + Millis(2500)), Millis(0)) << "2 s late: a loaded machine, not a pause";
}

TEST(OwnPauses, AGapPastTheToleranceIsAPauseOfTheGapLessOnePeriod) {
  OwnPauses pauses(Millis(500));
  pauses.observe(kFirstTick);
  EXPECT_EQ(pauses.observe(kFirstTick + Millis(2501)), Millis(2001));
  EXPECT_EQ(pauses.observe(kFirstTick + Millis(2501) + Millis(17'500)), Millis(17'000));
  EXPECT_EQ(pauses.observe(kFirstTick + Millis(2501) + Millis(18'000)), Millis(0)) << "ticking again";
}

TEST(OwnPauses, ALongTickPeriodToleratesThreePeriods) {
  OwnPauses pauses(Millis(2000));
  pauses.observe(kFirstTick);
  EXPECT_EQ(pauses.observe(kFirstTick + Millis(8000)), Millis(0));
  EXPECT_EQ(pauses.observe(kFirstTick + Millis(16'001)), Millis(6001));
}

}  // namespace
}  // namespace trainyard::daemon
