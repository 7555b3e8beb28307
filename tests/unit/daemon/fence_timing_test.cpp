#include "daemon/policy/fence_timing.h"

#include <gtest/gtest.h>

#include "proto/errors.h"

namespace trainyard::daemon {
namespace {

using namespace std::chrono_literals;

// The flag an InvalidInput names, or "" when `flags` are accepted.
std::string refused_flag(const FenceTimingFlags& flags) {
  try {
    fence_time(flags);
  } catch (const InvalidInput& e) {
    return e.field();
  }
  return "";
}

TEST(FenceTiming, TheDefaultsDeriveTheLongestSafeFence) {
  // 30 s node timeout - 10 s kill grace - 3 s margin.
  EXPECT_EQ(fence_time({5000ms, 30000ms, 10000ms, std::nullopt}), 17000ms);
  const FenceTimingFlags quick{100ms, 3000ms, 500ms, std::nullopt};
  const Millis fence = fence_time(quick);
  EXPECT_EQ(fence, 2200ms);
  EXPECT_LE(fence + quick.kill_grace + fence_margin(quick.node_timeout), quick.node_timeout);
}

TEST(FenceTiming, AnExplicitFenceMustKeepTheInequality) {
  EXPECT_EQ(fence_time({100ms, 3000ms, 500ms, 1000ms}), 1000ms);
  EXPECT_EQ(fence_time({100ms, 3000ms, 500ms, 2200ms}), 2200ms);
  EXPECT_EQ(refused_flag({100ms, 3000ms, 500ms, 2201ms}), "--fence-ms") << "fence + grace + margin past the timeout";
  EXPECT_EQ(refused_flag({100ms, 3000ms, 500ms, 150ms}), "--fence-ms") << "under two heartbeats";
}

TEST(FenceTiming, ANodeTimeoutThatLeavesNoRoomIsRefusedNamingWhatToChange) {
  // The old test cluster's timings: 1.5 s node timeout, 2 s kill grace.
  FenceTimingFlags tight{100ms, 1500ms, 2000ms, std::nullopt};
  try {
    fence_time(tight);
    FAIL() << "accepted";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "--node-timeout-ms");
    for (const char* part : {"--kill-grace-ms (2000)", "raise --node-timeout-ms (to about 2445)", "--fence-ms 0"}) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(refused_flag({100ms, 2443ms, 2000ms, std::nullopt}), "--node-timeout-ms");
  EXPECT_EQ(fence_time({100ms, 2445ms, 2000ms, std::nullopt}), 201ms) << "the figure the message gives holds";
  tight.fence = 0ms;
  EXPECT_EQ(fence_time(tight), 0ms) << "fencing turned off is always allowed";
}

TEST(FenceTiming, AFenceTooShortToOutlastATakeOverIsWarnedAbout) {
  // The defaults: a 17 s fence, agents leave at 8.5 s, a 5 s lease is taken over within 6 s.
  EXPECT_EQ(takeover_warning(17000ms, 5000ms), std::nullopt);
  EXPECT_EQ(takeover_warning(12000ms, 5000ms), std::nullopt) << "exactly twice the take-over";
  const auto warning = takeover_warning(2200ms, 5000ms);
  ASSERT_TRUE(warning);
  EXPECT_NE(warning->find("at least 12000 ms"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("--lease-ttl-ms"), std::string::npos) << *warning;
  EXPECT_EQ(takeover_warning(0ms, 5000ms), std::nullopt) << "no fence: attempts are never stopped for it";
}

}  // namespace
}  // namespace trainyard::daemon
