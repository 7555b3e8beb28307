#include "daemon/policy/straggler_rule.h"

#include <gtest/gtest.h>

#include <vector>

namespace trainyard::daemon {
namespace {

// A gang whose ranks report every `steps_per_report` steps, each rank taking its own milliseconds
// per step; the first report is at step 0 with no work.
struct Gang {
  explicit Gang(std::vector<double> ms_per_step) : ms(std::move(ms_per_step)), watch(ms.size()), work(ms.size(), 0) {}

  // One round of reports; the first rank named in it, with its ratio.
  std::optional<std::pair<std::size_t, double>> report(std::int64_t steps_per_report, bool rank0_checkpoints = false) {
    std::optional<std::pair<std::size_t, double>> named;
    for (std::size_t r = 0; r < ms.size(); ++r) {
      work[r] += ms[r] * static_cast<double>(steps_per_report);
      const auto ratio = watch.observe(r, step + steps_per_report, Millis(static_cast<std::int64_t>(work[r])),
                                       rank0_checkpoints && r == 0);
      if (ratio && !named) named = {r, *ratio};
    }
    step += steps_per_report;
    return named;
  }

  std::vector<double> ms;
  StragglerWatch watch;
  std::vector<double> work;
  std::int64_t step = 0;
};

// Rounds of reports until one names a rank, at most `rounds`; the round (1-based) and the naming.
std::optional<std::pair<int, std::pair<std::size_t, double>>> first_named(Gang& gang, int rounds, std::int64_t per_report) {
  for (std::size_t r = 0; r < gang.ms.size(); ++r) gang.watch.observe(r, 0, Millis(0), false);
  for (int round = 1; round <= rounds; ++round) {
    if (auto named = gang.report(per_report)) return std::make_pair(round, *named);
  }
  return std::nullopt;
}

TEST(StragglerRule, ARankAtTwiceTheMedianIsNamedAfterThreeWindowsOfTenSteps) {
  Gang gang({200, 200, 400, 200});
  const auto named = first_named(gang, 10, 10);
  ASSERT_TRUE(named);
  EXPECT_EQ(named->first, 3) << "three windows, not fewer";
  EXPECT_EQ(named->second.first, 2u);
  EXPECT_DOUBLE_EQ(named->second.second, 2.0);
  // Named once per attempt.
  for (int round = 0; round < 5; ++round) EXPECT_FALSE(gang.report(10));
}

TEST(StragglerRule, WindowsNeedTenStepsSoFrequentReportsWaitForThem) {
  Gang gang({200, 300});  // 1.5x: at the threshold
  const auto named = first_named(gang, 40, 2);
  ASSERT_TRUE(named);
  EXPECT_EQ(named->first, 15) << "3 windows of 10 steps, reported 2 at a time";
  EXPECT_EQ(named->second.first, 1u);
  EXPECT_DOUBLE_EQ(named->second.second, 1.5);
}

TEST(StragglerRule, ARankJustBelowTheRatioOrAnEvenGangIsNeverNamed) {
  Gang below({200, 200, 290});
  EXPECT_FALSE(first_named(below, 50, 10));
  Gang even({200, 210, 190, 205});
  EXPECT_FALSE(first_named(even, 50, 10));
  Gang alone({900});
  EXPECT_FALSE(first_named(alone, 50, 10)) << "no one to compare with";
}

TEST(StragglerRule, AFastWindowBreaksTheRun) {
  Gang gang({100, 300});
  for (std::size_t r = 0; r < 2; ++r) gang.watch.observe(r, 0, Millis(0), false);
  EXPECT_FALSE(gang.report(10));
  EXPECT_FALSE(gang.report(10));
  gang.ms[1] = 100;  // it caught up for a window
  EXPECT_FALSE(gang.report(10));
  gang.ms[1] = 300;
  EXPECT_FALSE(gang.report(10));
  EXPECT_FALSE(gang.report(10));
  EXPECT_TRUE(gang.report(10)) << "three slow windows in a row again";
}

TEST(StragglerRule, WindowsWithACheckpointAreNotJudged) {
  // Rank 0 is slow only because it writes checkpoints; those windows neither count nor break a run.
  Gang gang({400, 200, 200});
  for (std::size_t r = 0; r < 3; ++r) gang.watch.observe(r, 0, Millis(0), false);
  for (int round = 0; round < 10; ++round) EXPECT_FALSE(gang.report(10, true));
  EXPECT_FALSE(gang.report(10));
  EXPECT_FALSE(gang.report(10));
  EXPECT_TRUE(gang.report(10));
}

TEST(StragglerRule, ShortWindowsWaitForEnoughWorkAndARestartedRankStartsOver) {
  StragglerWatch watch(2);
  watch.observe(0, 0, Millis(0), false);
  watch.observe(1, 0, Millis(0), false);
  // Ten steps of 1 ms are too coarse to judge: the window stays open until 100 ms of work.
  EXPECT_FALSE(watch.observe(0, 10, Millis(10), false));
  EXPECT_FALSE(watch.observe(1, 10, Millis(30), false));
  // A report whose work went back is a new run of the rank: a fresh window, nothing judged.
  EXPECT_FALSE(watch.observe(1, 12, Millis(0), false));
  EXPECT_FALSE(watch.observe(5, 10, Millis(10), false)) << "a rank the attempt does not have";
}

}  // namespace
}  // namespace trainyard::daemon
