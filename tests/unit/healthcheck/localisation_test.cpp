#include "healthcheck/localisation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "tests/unit/healthcheck/run_builder.h"

namespace trainyard::healthcheck {
namespace {

using testing::kMB;
using testing::node_names;
using testing::RankFigures;
using testing::run_of;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(LocalisationPlanTest, FewerThanThreeNodesHaveNothingToCompareWith) {
  EXPECT_TRUE(plan_localisation({}).rounds.empty());
  EXPECT_TRUE(plan_localisation({"a", "b"}).rounds.empty());
}

TEST(LocalisationPlanTest, EveryPairOnceInRoundsOfDisjointPairs) {
  for (int n = 3; n <= 12; ++n) {
    const auto nodes = node_names(n);
    const LocalisationPlan plan = plan_localisation(nodes);
    EXPECT_EQ(plan.rounds.size(), static_cast<std::size_t>(n % 2 == 0 ? n - 1 : n)) << n;
    std::set<std::set<std::string>> pairs;
    for (const auto& round : plan.rounds) {
      std::set<std::string> busy;
      EXPECT_EQ(round.size(), static_cast<std::size_t>(n / 2)) << n;
      for (const TestSet& set : round) {
        ASSERT_EQ(set.size(), 2u);
        for (const std::string& node : set) EXPECT_TRUE(busy.insert(node).second) << node << " twice in a round";
        EXPECT_TRUE(pairs.insert({set[0], set[1]}).second) << set[0] << "+" << set[1] << " twice";
      }
    }
    EXPECT_EQ(pairs.size(), static_cast<std::size_t>(n * (n - 1) / 2)) << n;
  }
}

std::vector<std::string> numbered(std::size_t n) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < n; ++i) names.push_back("n" + std::to_string(i));
  return names;
}

TEST(LocalisationPlanTest, GroupsAreAsEvenAsPossibleInOrderAndNeverBelowTheMinimum) {
  const auto sizes = [](const std::vector<std::vector<std::string>>& groups) {
    std::vector<std::size_t> out;
    for (const auto& g : groups) out.push_back(g.size());
    return out;
  };
  EXPECT_TRUE(split_into_groups({}, 16).empty());
  EXPECT_EQ(sizes(split_into_groups(numbered(16), 16)), (std::vector<std::size_t>{16}));
  EXPECT_EQ(sizes(split_into_groups(numbered(17), 16)), (std::vector<std::size_t>{9, 8}));
  EXPECT_EQ(sizes(split_into_groups(numbered(40), 16)), (std::vector<std::size_t>{14, 13, 13}));
  EXPECT_EQ(sizes(split_into_groups(numbered(4), 3, 3)), (std::vector<std::size_t>{4})) << "no group of 2 for pairs";
  EXPECT_EQ(sizes(split_into_groups(numbered(5), 0)), (std::vector<std::size_t>{1, 1, 1, 1, 1}));
  const auto groups = split_into_groups(numbered(19'400), 16);
  EXPECT_EQ(groups.size(), 1213u);
  std::vector<std::string> joined;
  for (const auto& g : groups) {
    EXPECT_LE(g.size(), 16u);
    EXPECT_GE(g.size(), 15u);
    joined.insert(joined.end(), g.begin(), g.end());
  }
  EXPECT_EQ(joined, numbered(19'400)) << "every node once, in order";
}

TEST(LocalisationPlanTest, AGroupedPlanComparesPairsOnlyInsideGroupsAndRunsTheGroupsSideBySide) {
  const auto nodes = numbered(1024);
  const LocalisationPlan plan = plan_localisation(nodes, 16);
  EXPECT_EQ(plan.rounds.size(), 15u) << "a group of 16 needs 15 rounds, however many groups there are";
  std::map<std::string, std::size_t> group_of;
  const auto groups = split_into_groups(nodes, 16, 3);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (const auto& n : groups[g]) group_of[n] = g;
  }
  std::set<std::set<std::string>> pairs;
  for (const auto& round : plan.rounds) {
    std::set<std::string> busy;
    EXPECT_EQ(round.size(), 512u);
    for (const TestSet& set : round) {
      ASSERT_EQ(set.size(), 2u);
      EXPECT_EQ(group_of.at(set[0]), group_of.at(set[1])) << set[0] << "+" << set[1] << " cross groups";
      for (const std::string& node : set) EXPECT_TRUE(busy.insert(node).second) << node << " twice in a round";
      pairs.insert({set[0], set[1]});
    }
  }
  EXPECT_EQ(pairs.size(), 64u * (16 * 15 / 2)) << "every pair inside each group";
  EXPECT_EQ(plan_localisation(numbered(12), 16), plan_localisation(numbered(12))) << "a set within one group: all pairs";
}

// A simulated cluster: every node is fine, slow, or returns wrong results; a test set behaves as
// its worst member. Runs the plan's follow-ups and returns them as the daemon would collect them.
enum class Fault { none, slow, wrong };

std::vector<CollectiveRun> follow_ups(const std::vector<std::string>& nodes, const std::map<std::string, Fault>& faults) {
  std::vector<CollectiveRun> runs;
  for (const auto& round : plan_localisation(nodes).rounds) {
    for (const TestSet& set : round) {
      Fault worst = Fault::none;
      for (const std::string& node : set) {
        const auto it = faults.find(node);
        if (it != faults.end()) worst = std::max(worst, it->second);
      }
      // A slow member drags the whole pair down to its speed (1 MB/s against 100 MB/s).
      RankFigures figures{worst == Fault::slow ? 1 * kMB : 100 * kMB};
      std::vector<RankFigures> ranks(set.size(), figures);
      if (worst == Fault::wrong) ranks.back().wrong = "all_reduce element 3 is 7, want 6";
      runs.push_back(run_of(set, ranks));
    }
  }
  return runs;
}

struct LocalisationCase {
  const char* what;
  int nodes;
  std::map<std::string, Fault> faults;
  std::map<std::string, NodeState> expected;  // nodes not listed must be HEALTHY
};

class LocaliseTest : public ::testing::TestWithParam<LocalisationCase> {};

TEST_P(LocaliseTest, NamesExactlyTheBadNodes) {
  const LocalisationCase& c = GetParam();
  const auto nodes = node_names(c.nodes);
  const std::vector<NodeVerdict> verdicts = localise(follow_ups(nodes, c.faults), {});
  ASSERT_EQ(verdicts.size(), nodes.size());
  for (const NodeVerdict& v : verdicts) {
    const auto it = c.expected.find(v.node);
    EXPECT_EQ(v.state, it == c.expected.end() ? NodeState::healthy : it->second) << c.what << ", " << v.node << ": " << v.reason;
    if (v.state != NodeState::healthy) {
      EXPECT_THAT(v.reason, StartsWith("localised: ")) << c.what;
    }
  }
}

using testing::S;
using testing::U;

INSTANTIATE_TEST_SUITE_P(
    Clusters, LocaliseTest,
    ::testing::Values(LocalisationCase{"none bad", 5, {}, {}},
                      LocalisationCase{"slow one of 3", 3, {{"node-b", Fault::slow}}, {{"node-b", S}}},
                      LocalisationCase{"slow one of 4", 4, {{"node-d", Fault::slow}}, {{"node-d", S}}},
                      LocalisationCase{"slow one of 8", 8, {{"node-e", Fault::slow}}, {{"node-e", S}}},
                      LocalisationCase{"wrong one of 3", 3, {{"node-a", Fault::wrong}}, {{"node-a", U}}},
                      LocalisationCase{"wrong one of 4", 4, {{"node-c", Fault::wrong}}, {{"node-c", U}}},
                      LocalisationCase{"wrong one of 8", 8, {{"node-h", Fault::wrong}}, {{"node-h", U}}},
                      LocalisationCase{"two slow of 4", 4, {{"node-a", Fault::slow}, {"node-c", Fault::slow}},
                                       {{"node-a", S}, {"node-c", S}}},
                      LocalisationCase{"two wrong of 4", 4, {{"node-b", Fault::wrong}, {"node-d", Fault::wrong}},
                                       {{"node-b", U}, {"node-d", U}}},
                      LocalisationCase{"one wrong one slow of 8", 8, {{"node-b", Fault::wrong}, {"node-g", Fault::slow}},
                                       {{"node-b", U}, {"node-g", S}}},
                      LocalisationCase{"three slow of 8", 8,
                                       {{"node-a", Fault::slow}, {"node-d", Fault::slow}, {"node-f", Fault::slow}},
                                       {{"node-a", S}, {"node-d", S}, {"node-f", S}}}),
    [](const auto& info) {
      std::string name = info.param.what;
      for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
      return name;
    });

const NodeVerdict& verdict_of(const std::vector<NodeVerdict>& verdicts, const std::string& node) {
  const auto it = std::find_if(verdicts.begin(), verdicts.end(), [&](const NodeVerdict& v) { return v.node == node; });
  if (it == verdicts.end()) throw std::logic_error("no verdict for " + node);
  return *it;
}

TEST(LocaliseTest, TheCulpritsReasonNamesTheClearedPartnerAndTheEvidence) {
  const auto verdicts = localise(follow_ups(node_names(3), {{"node-b", Fault::wrong}}), {});
  EXPECT_THAT(verdict_of(verdicts, "node-b").reason,
              ::testing::MatchesRegex("localised: failed with node-[ac]: rank [01] \\(node-[abc]\\): all_reduce: "
                                      "all_reduce element 3 is 7, want 6"));
  EXPECT_THAT(verdict_of(verdicts, "node-a").reason, "passed a follow-up collective test with node-c");

  const auto slow = localise(follow_ups(node_names(4), {{"node-d", Fault::slow}}), {});
  EXPECT_THAT(verdict_of(slow, "node-d").reason, StartsWith("localised: slow with node-"));
  EXPECT_THAT(verdict_of(slow, "node-d").reason, HasSubstr("busbw 1 MB/s below 0.5 x the reference 100 MB/s"));
}

TEST(LocaliseTest, WhenNoTwoNodesAreGoodNothingIsClearedAndEveryoneIsImplicated) {
  const auto verdicts =
      localise(follow_ups(node_names(3), {{"node-a", Fault::wrong}, {"node-b", Fault::wrong}}), {});
  for (const NodeVerdict& v : verdicts) {
    EXPECT_EQ(v.state, NodeState::unhealthy);
    EXPECT_THAT(v.reason, StartsWith("implicated by 2 follow-up tests but not localised: failed with "));
  }
}

TEST(LocaliseTest, TheFloorCatchesAClusterThatIsUniformlySlow) {
  const auto nodes = node_names(4);
  const auto runs = follow_ups(nodes, {});  // all pairs at 100 MB/s
  for (const NodeVerdict& v : localise(runs, {0.5, 50 * kMB})) EXPECT_EQ(v.state, NodeState::healthy);
  for (const NodeVerdict& v : localise(runs, {0.5, 200 * kMB})) {
    EXPECT_EQ(v.state, NodeState::suspect);
    EXPECT_THAT(v.reason, HasSubstr("below the floor of 200 MB/s"));
  }
}

TEST(LocalisationReportTest, ShowsEachPairsOutcomeAndBusbwAgainstTheReference) {
  const auto runs = follow_ups(node_names(4), {{"node-d", Fault::slow}, {"node-b", Fault::wrong}});
  const LocalisationReport report = report_localisation(runs, {0.5, std::nullopt});
  EXPECT_DOUBLE_EQ(report.reference_busbw.at(CollectiveKind::all_reduce), 100 * kMB);
  EXPECT_DOUBLE_EQ(report.suspect_fraction, 0.5);
  ASSERT_EQ(report.tests.size(), 6u);
  for (const FollowUpTest& t : report.tests) {
    const bool has_b = std::count(t.nodes.begin(), t.nodes.end(), "node-b") > 0;
    const bool has_d = std::count(t.nodes.begin(), t.nodes.end(), "node-d") > 0;
    // The wrong result outranks the slowness, as in the verdicts.
    EXPECT_EQ(t.outcome, has_b ? "failed" : has_d ? "slow" : "passed") << t.nodes[0] << "+" << t.nodes[1];
    EXPECT_EQ(t.why.empty(), t.outcome == "passed");
    if (has_b) {
      EXPECT_FALSE(t.busbw.count(CollectiveKind::all_reduce));  // not exact: no figure
    } else {
      EXPECT_DOUBLE_EQ(t.busbw.at(CollectiveKind::all_gather), has_d ? 1 * kMB : 100 * kMB);
    }
  }
}

// The decoder takes any follow-up sets: here rings of 3 that each leave one of 4 nodes out.
TEST(LocaliseTest, LeaveOneOutRingsLocaliseToo) {
  const auto nodes = node_names(4);
  std::vector<CollectiveRun> rings;
  for (std::size_t out = 0; out < nodes.size(); ++out) {
    std::vector<std::string> ring;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (i != out) ring.push_back(nodes[i]);
    }
    const bool has_bad = out != 2;  // node-c is bad
    std::vector<RankFigures> figures(3);
    if (has_bad) figures[0].wrong = "all_reduce element 0 is 1, want 0";
    rings.push_back(run_of(ring, figures));
  }
  const auto verdicts = localise(rings, {});
  for (const NodeVerdict& v : verdicts) {
    EXPECT_EQ(v.state, v.node == "node-c" ? NodeState::unhealthy : NodeState::healthy) << v.node << ": " << v.reason;
  }
}

}  // namespace
}  // namespace trainyard::healthcheck
