#include <gtest/gtest.h>

#include "daemon/policy/stuck_diagnosis.h"

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

constexpr const char* kWaitingInBackward =
    "/usr/lib/python3/dist-packages/torch/autograd/__init__.py:200 in backward\n"
    "/home/u/ddp_train.py:40 in main\n/home/u/ddp_train.py:63 in <module>";
constexpr const char* kAsleepInItsOwnCode = "/home/u/ddp_train.py:17 in hang_here\n/home/u/ddp_train.py:63 in <module>";

TEST(StuckDiagnosis, WhereTheProcessesWereOutranksTheirLastReportedPhase) {
  // Both last reported all-reduce at step 11; rank 1 is in fact asleep in its own code.
  std::vector<RankProgress> ranks = {rank(0, "a", 11, "all-reduce", 2100ms), rank(1, "b", 11, "all-reduce", 2100ms)};
  ranks[0].where = {{0, 8, "S", "", kWaitingInBackward}};
  ranks[1].where = {{1, 9, "S", "hrtimer_nanosleep", kAsleepInItsOwnCode}};
  const auto d = diagnose_stuck(ranks);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->culprits, std::vector<int>{1});
  EXPECT_EQ(d->text,
            "no training progress for 2s: rank 1 (b) blocked in all-reduce at step 11; rank 0 (a) waiting in all-reduce "
            "at step 11 (allowed: the test's); where: b RANK 1 pid 9 sleeping in hrtimer_nanosleep: ddp_train.py:17 in "
            "hang_here; a RANK 0 pid 8 sleeping: ddp_train.py:40 in main (inside autograd/__init__.py:200 in backward)");
}

// Ranks of a job that reports no steps, each idle 31 s of an allowed 30, on nodes a, b, c...
std::vector<RankProgress> idle_ranks(int count) {
  std::vector<RankProgress> ranks;
  for (int r = 0; r < count; ++r) {
    ranks.push_back(rank(r, std::string(1, static_cast<char>('a' + r)), 0, "", 31000ms, 30000ms));
    ranks.back().judged_on_idleness = true;
  }
  return ranks;
}

TEST(StuckDiagnosis, RanksJudgedOnIdlenessNameTheStoppedOneBeforeOthersWithoutAStack) {
  std::vector<RankProgress> ranks = idle_ranks(3);
  ranks[0].where = {{0, 8, "S", "do_epoll_wait", kWaitingInBackward}};
  ranks[1].where = {{1, 9, "T", "do_signal_stop", ""}};
  ranks[2].where = {{2, 10, "S", "do_epoll_wait", ""}};  // not Python: says nothing either way
  const auto d = diagnose_stuck(ranks);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->culprits, std::vector<int>{1});
  EXPECT_EQ(d->text,
            "no output, CPU or I/O for 30s: rank 1 (b) stopped; ranks 0,2 (a,c) waiting on them (allowed: the test's); "
            "where: b RANK 1 pid 9 stopped (state T); a RANK 0 pid 8 sleeping in do_epoll_wait: ddp_train.py:40 in main "
            "(inside autograd/__init__.py:200 in backward); c RANK 2 pid 10 sleeping in do_epoll_wait");
}

TEST(StuckDiagnosis, RanksWaitingAtABarrierWhileAnotherWorksAreNotStuck) {
  // Rank 0 evaluates (active: 2 s idle) while ranks 1 and 2 wait for it in a barrier, idle 31 s.
  std::vector<RankProgress> ranks = idle_ranks(3);
  ranks[0].silent = 2000ms;
  ranks[1].where = {{1, 9, "S", "", "/x/torch/distributed/distributed_c10d.py:3300 in barrier\n/t.py:9 in <module>"}};
  ranks[2].where = ranks[1].where;
  EXPECT_FALSE(diagnose_stuck(ranks));
  ranks[0].silent = 31000ms;  // and now rank 0 idles too: all wait, nothing works
  const auto d = diagnose_stuck(ranks);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->culprits, std::vector<int>{0});
}

TEST(StuckDiagnosis, AnIdleRankAsleepInItsOwnCodeIsTheHang) {
  std::vector<RankProgress> ranks = idle_ranks(2);
  ranks[0].where = {{0, 8, "S", "", kWaitingInBackward}};
  ranks[1].where = {{1, 9, "S", "", kAsleepInItsOwnCode}};
  const auto d = diagnose_stuck(ranks);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->culprits, std::vector<int>{1});
  EXPECT_NE(d->text.find("rank 1 (b) hung; rank 0 (a) waiting on them"), std::string::npos) << d->text;
}

}  // namespace
}  // namespace trainyard::daemon
