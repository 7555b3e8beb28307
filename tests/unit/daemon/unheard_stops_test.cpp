// The bookkeeping of ranks an attempt ended without (daemon/unheard_stops.h), on explicit times;
// how the job manager acts on it is in job_recovery_test.cpp.
#include "daemon/unheard_stops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace trainyard::daemon {
namespace {

using ::testing::ElementsAre;

MonoTime at(int ms) { return MonoTime(Millis(ms)); }

TEST(UnheardStops, AJobIsHeldUntilEachOfItsNodesIsHeard) {
  UnheardStops stops;
  stops.add({7, 70, "n1", 8, at(5000)});
  stops.add({7, 70, "n2", 8, at(6000)});
  stops.add({9, 90, "n2", 4, at(4000)});
  EXPECT_TRUE(stops.holds(7));
  EXPECT_EQ(stops.held_until(7), at(6000)) << "the last of its nodes";
  EXPECT_FALSE(stops.holds(8));
  EXPECT_THAT(stops.attempts_on("n2"), ElementsAre(70, 90));

  const auto heard = stops.heard_stopped("n2", 70);
  ASSERT_TRUE(heard);
  EXPECT_EQ(heard->job, 7);
  EXPECT_EQ(heard->cores, 8);
  EXPECT_FALSE(stops.heard_stopped("n2", 70)) << "once";
  EXPECT_EQ(stops.held_until(7), at(5000));

  ASSERT_TRUE(stops.heard_stopped("n1", 70));
  EXPECT_FALSE(stops.holds(7));
  EXPECT_TRUE(stops.holds(9));
  ASSERT_TRUE(stops.heard_stopped("n2", 90));
  EXPECT_FALSE(stops.holds(9));
  EXPECT_TRUE(stops.empty());
}

TEST(UnheardStops, ANodeHeardStoppingAnAttemptItWasNotWaitedOnChangesNothing) {
  UnheardStops stops;
  stops.add({7, 70, "n1", 8, at(5000)});
  EXPECT_FALSE(stops.heard_stopped("n2", 70));
  EXPECT_FALSE(stops.heard_stopped("n1", 71));
  EXPECT_TRUE(stops.attempts_on("n0").empty());
  EXPECT_TRUE(stops.attempts_on("n10").empty()) << "a name that sorts after n1";
  EXPECT_TRUE(stops.holds(7));
}

}  // namespace
}  // namespace trainyard::daemon
