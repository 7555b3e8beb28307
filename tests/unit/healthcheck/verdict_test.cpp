#include "healthcheck/verdict.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/healthcheck/run_builder.h"

namespace trainyard::healthcheck {
namespace {

using testing::kMB;
using testing::node_names;
using testing::RankFigures;
using testing::run_of;
using ::testing::HasSubstr;

CheckResult passed(AcceleratorTest test) { return {test, CheckStatus::passed, 1e-6, 1e-5, 2.0, ""}; }

CoreResult healthy_core(int core) {
  return {core, {passed(AcceleratorTest::gemm), passed(AcceleratorTest::stochastic_rounding), passed(AcceleratorTest::memory)}};
}

TEST(AcceleratorVerdictTest, AllCoresPassingIsHealthy) {
  AcceleratorReport report;
  for (int c = 0; c < 4; ++c) report.cores.push_back(healthy_core(c));
  EXPECT_EQ(judge_accelerator("node-a", report),
            (NodeVerdict{"node-a", NodeState::healthy, "accelerator suite passed on all 4 cores"}));
}

TEST(AcceleratorVerdictTest, FailingCoresAreNamedAndSkippedTestsAreNotRepeated) {
  AcceleratorReport report;
  for (int c = 0; c < 4; ++c) report.cores.push_back(healthy_core(c));
  report.cores[1].checks[0] = {AcceleratorTest::gemm, CheckStatus::failed, 12.5, 1e-3, 2.0,
                               "core 1: GEMM element [0,3] off by 12.5 (tolerance 0.001)"};
  report.cores[3].checks = {{AcceleratorTest::gemm, CheckStatus::timed_out, 2001, 2000, 2001,
                             "core 3: GEMM timed out after 2001 ms (budget 2000 ms)"},
                            {AcceleratorTest::stochastic_rounding, CheckStatus::skipped, 0, 0, 0, ""},
                            {AcceleratorTest::memory, CheckStatus::skipped, 0, 0, 0, ""}};
  EXPECT_EQ(judge_accelerator("node-a", report),
            (NodeVerdict{"node-a", NodeState::unhealthy,
                         "2 of 4 cores failed: core 1: GEMM element [0,3] off by 12.5 (tolerance 0.001); "
                         "core 3: GEMM timed out after 2001 ms (budget 2000 ms)"}));
}

AcceleratorReport timed_cores(const std::vector<double>& gemm_ms) {
  AcceleratorReport report;
  for (std::size_t c = 0; c < gemm_ms.size(); ++c) {
    report.cores.push_back(healthy_core(static_cast<int>(c)));
    report.cores.back().gemm_ms = gemm_ms[c];
  }
  return report;
}

TEST(AcceleratorVerdictTest, ACoreAtTwiceTheMedianOfTheOthersIsSuspectNamingItAndTheRatio) {
  EXPECT_EQ(judge_accelerator("node-a", timed_cores({0.3, 0.3, 0.9, 0.31})),
            (NodeVerdict{"node-a", NodeState::suspect,
                         "accelerator suite passed on all 4 cores but is slow: core 2: GEMM in 0.9 ms, 3x the median "
                         "of the other cores (0.3 ms)"}));
  // Just under the ratio, and a ratio of its own.
  EXPECT_EQ(judge_accelerator("node-a", timed_cores({0.3, 0.3, 0.59, 0.3})).state, NodeState::healthy);
  EXPECT_EQ(judge_accelerator("node-a", timed_cores({0.3, 0.3, 0.45, 0.3}), {.slow_ratio = 1.5}).state,
            NodeState::suspect);
}

TEST(AcceleratorVerdictTest, ANodeSlowAsAWholeIsJudgedAgainstTheFleet) {
  const AcceleratorReport slow = timed_cores({0.9, 0.92, 0.9, 0.91});
  ASSERT_TRUE(node_gemm_ms(slow));
  EXPECT_DOUBLE_EQ(*node_gemm_ms(slow), 0.905);
  // Its cores agree with each other: only the fleet shows it.
  EXPECT_EQ(judge_accelerator("node-a", slow).state, NodeState::healthy);
  const NodeVerdict verdict = judge_accelerator("node-a", slow, {.fleet_gemm_ms = 0.3});
  EXPECT_EQ(verdict.state, NodeState::suspect);
  EXPECT_THAT(verdict.reason, HasSubstr("GEMM in 0.905 ms (median core), 3.02x the median of the other nodes (0.3 ms)"));
  EXPECT_EQ(judge_accelerator("node-a", slow, {.fleet_gemm_ms = 0.5}).state, NodeState::healthy);
}

TEST(AcceleratorVerdictTest, UntimedCoresAreNotComparedAndFailuresOutrankSlowness) {
  EXPECT_EQ(node_gemm_ms(timed_cores({0, 0})), std::nullopt);
  EXPECT_EQ(judge_accelerator("node-a", timed_cores({0, 0.3, 0}), {.fleet_gemm_ms = 0.1}).state, NodeState::suspect);
  EXPECT_EQ(judge_accelerator("node-a", timed_cores({0, 0.9, 0.3})).state, NodeState::suspect);
  EXPECT_EQ(judge_accelerator("node-a", timed_cores({0.3})).state, NodeState::healthy) << "one core: nobody to compare";
  AcceleratorReport failing = timed_cores({0.3, 0.3, 3.0});
  failing.cores[0].checks[2] = {AcceleratorTest::memory, CheckStatus::failed, 3, 0, 2.0,
                                "core 0: memory pattern checkerboard word 7 read back wrong"};
  const NodeVerdict verdict = judge_accelerator("node-a", failing);
  EXPECT_EQ(verdict.state, NodeState::unhealthy);
  EXPECT_EQ(verdict.reason, "1 of 3 cores failed: core 0: memory pattern checkerboard word 7 read back wrong");
}

TEST(AcceleratorVerdictTest, AReportWithoutCoresIsUnhealthy) {
  EXPECT_EQ(judge_accelerator("node-a", {}).state, NodeState::unhealthy);
}

struct BusbwCase {
  const char* what;
  std::vector<double> busbw_mb;  // per node, every collective
  double fraction;
  std::vector<NodeState> expected;
};

class BusbwVerdictTest : public ::testing::TestWithParam<BusbwCase> {};

TEST_P(BusbwVerdictTest, SlowNodesAgainstTheMedianAreSuspect) {
  const BusbwCase& c = GetParam();
  std::vector<RankFigures> figures;
  for (double b : c.busbw_mb) figures.push_back({b * kMB});
  const auto nodes = node_names(static_cast<int>(figures.size()));
  const CollectiveVerdict verdict = judge_collective_run(run_of(nodes, figures), {c.fraction, std::nullopt});
  EXPECT_FALSE(verdict.needs_localisation);
  ASSERT_EQ(verdict.nodes.size(), c.expected.size());
  for (std::size_t i = 0; i < c.expected.size(); ++i) {
    EXPECT_EQ(verdict.nodes[i].node, nodes[i]);
    EXPECT_EQ(verdict.nodes[i].state, c.expected[i]) << c.what << ": " << verdict.nodes[i].reason;
  }
}

using testing::H;
using testing::S;

INSTANTIATE_TEST_SUITE_P(
    Tables, BusbwVerdictTest,
    ::testing::Values(
        // median 99.5: everyone within 0.5 x
        BusbwCase{"even", {100, 98, 102, 99}, 0.5, {H, H, H, H}},
        // median 100: 40 < 50
        BusbwCase{"one slow", {100, 40, 100, 100}, 0.5, {H, S, H, H}},
        // median 100: 51 >= 50
        BusbwCase{"just above the fraction", {100, 51, 100, 100}, 0.5, {H, H, H, H}},
        // median 100: 70 < 80 with a stricter fraction
        BusbwCase{"configured fraction", {100, 70, 100, 100}, 0.8, {H, S, H, H}},
        // median (20 + 30) / 2 = 25: 10 < 12.5, 20 >= 12.5
        BusbwCase{"even count median", {10, 20, 30, 40}, 0.5, {S, H, H, H}},
        // median 100: a fast outlier blames nobody
        BusbwCase{"fast outlier", {100, 100, 100, 900}, 0.5, {H, H, H, H}},
        // median 100: two slow of five; the median is still a good node's
        BusbwCase{"two slow of five", {1, 100, 2, 100, 100}, 0.5, {S, H, S, H, H}}),
    [](const auto& info) {
      std::string name = info.param.what;
      for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
      return name;
    });

TEST(CollectiveVerdictTest, OneSlowCollectiveIsEnoughAndTheReasonNamesIt) {
  std::vector<RankFigures> figures(4);
  figures[2].per_kind[CollectiveKind::all_gather] = 30 * kMB;  // median 100 MB/s
  const CollectiveVerdict verdict = judge_collective_run(run_of(node_names(4), figures), {});
  EXPECT_EQ(verdict.nodes[2],
            (NodeVerdict{"node-c", NodeState::suspect, "all_gather busbw 30 MB/s below 0.5 x the median 100 MB/s of 4 nodes"}));
  EXPECT_EQ(verdict.nodes[0].reason, "collectives exact; all_reduce busbw 100 MB/s");
}

TEST(CollectiveVerdictTest, AWrongResultBetweenTwoNodesMakesBothUnhealthy) {
  std::vector<RankFigures> figures(2);
  figures[1].wrong = "all_reduce element 5 is 9, want 8";
  const CollectiveVerdict verdict = judge_collective_run(run_of({"n1", "n2"}, figures), {});
  EXPECT_FALSE(verdict.needs_localisation);
  const std::string reason = "collective run over 2 nodes (n1, n2) failed: rank 1 (n2): all_reduce: all_reduce element 5 is 9, want 8";
  EXPECT_EQ(verdict.nodes, (std::vector<NodeVerdict>{{"n1", NodeState::unhealthy, reason}, {"n2", NodeState::unhealthy, reason}}));
}

TEST(CollectiveVerdictTest, AFailureAmongThreeOrMoreAsksForLocalisation) {
  std::vector<RankFigures> figures(4);
  figures[0].error = "all_gather: rank 1 (10.0.0.2:7000) closed the connection";
  const CollectiveVerdict verdict = judge_collective_run(run_of(node_names(4), figures), {});
  EXPECT_TRUE(verdict.needs_localisation);
  for (const NodeVerdict& v : verdict.nodes) {
    EXPECT_EQ(v.state, NodeState::unhealthy);
    EXPECT_THAT(v.reason, HasSubstr("rank 0 (node-a): all_gather: rank 1 (10.0.0.2:7000) closed the connection; localising"));
  }
}

TEST(CollectiveVerdictTest, AFailedRunWhosePortsRefusedConnectionsJudgesNoNode) {
  for (const int nodes : {2, 4}) {
    std::vector<RankFigures> figures(static_cast<std::size_t>(nodes));
    figures[0].error = "all_gather: rank 1 (10.0.0.2:7000) did not answer within 10000 ms";
    figures[1].refused = 280;
    const CollectiveVerdict verdict = judge_collective_run(run_of(node_names(nodes), figures), {});
    EXPECT_TRUE(verdict.nodes.empty()) << "a flood at the port says nothing about the node";
    EXPECT_FALSE(verdict.needs_localisation);
    EXPECT_THAT(verdict.interference,
                HasSubstr("failed while rank 1 (node-b) refused 280 data-plane connections, so it "
                          "judges no node: rank 0 (node-a): all_gather: rank 1"));
  }
}

TEST(CollectiveVerdictTest, RefusedConnectionsDoNotExcuseOrSpoilARunThatPassed) {
  std::vector<RankFigures> figures(2);
  figures[0].refused = 3;
  const CollectiveVerdict passed = judge_collective_run(run_of({"n1", "n2"}, figures), {});
  EXPECT_TRUE(passed.interference.empty());
  EXPECT_EQ(passed.nodes[0].state, NodeState::healthy);
  figures[1].wrong = "all_reduce element 5 is 9, want 8";
  EXPECT_EQ(judge_collective_run(run_of({"n1", "n2"}, figures), {}).nodes[1].state, NodeState::unhealthy)
      << "a wrong result is the nodes' whoever was at the ports";
  figures[1].wrong.clear();
  figures[1].error = "all_gather: rank 0 (10.0.0.1:7000) closed the connection";
  figures[0].refused = 0;
  EXPECT_EQ(judge_collective_run(run_of({"n1", "n2"}, figures), {}).nodes[1].state, NodeState::unhealthy)
      << "without refused connections a failure is the nodes'";
}

TEST(CollectiveVerdictTest, ARunBelowTheFloorIsSlowAsAWhole) {
  // In a ring every rank waits for the slowest link, so one bad node looks like four slow ones.
  std::vector<RankFigures> figures(4, RankFigures{2 * kMB});
  CollectivePolicy policy{0.5, 10 * kMB};
  const CollectiveVerdict four = judge_collective_run(run_of(node_names(4), figures), policy);
  EXPECT_TRUE(four.needs_localisation);
  for (const NodeVerdict& v : four.nodes) {
    EXPECT_EQ(v.state, NodeState::suspect);
    EXPECT_THAT(v.reason, HasSubstr("is slow: all_gather median busbw 2 MB/s below the floor of 10 MB/s"));
  }
  figures.resize(2);
  const CollectiveVerdict two = judge_collective_run(run_of({"n1", "n2"}, figures), policy);
  EXPECT_FALSE(two.needs_localisation);
  EXPECT_EQ(two.nodes[1].state, NodeState::suspect);

  policy.min_busbw = 1 * kMB;
  EXPECT_FALSE(judge_collective_run(run_of({"n1", "n2"}, figures), policy).needs_localisation);
  EXPECT_EQ(judge_collective_run(run_of({"n1", "n2"}, figures), policy).nodes[0].state, NodeState::healthy);
}

}  // namespace
}  // namespace trainyard::healthcheck
