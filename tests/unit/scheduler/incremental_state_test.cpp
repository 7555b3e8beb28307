// What the scheduler keeps up to date as nodes and work change rather than recomputes for every
// pass: the capacity index and placement groups must equal what a rebuild from the
// node slots gives, and the expected usage what a walk over the running work gives; best fit stops
// early by the kept counts and must choose what a full scan chooses.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "scheduler/placement.h"
#include "scheduler/state.h"
#include "scheduler_fixtures.h"

namespace trainyard::scheduler {
namespace {

using fixtures::at_s;
using fixtures::node;

// The index as every pass used to build it, from every node slot.
Capacity rebuilt_capacity(const detail::State& state) {
  Capacity capacity;
  for (const detail::NodeSlot& slot : state.nodes) {
    const int total = slot.present ? slot.cores : 0;
    capacity.add_node(total, std::clamp(total - slot.used, 0, total), slot.present && slot.accepts);
    capacity.set_memory(capacity.node_count() - 1, slot.memory_mb, std::max<std::int64_t>(slot.memory_mb - slot.used_memory_mb, 0));
  }
  return capacity;
}

std::vector<int> rebuilt_groups(const detail::State& state, const std::map<std::string, std::string>& rack_of) {
  std::vector<int> groups;
  for (const detail::NodeSlot& slot : state.nodes) {
    const auto rack = rack_of.find(slot.name);
    groups.push_back(rack == rack_of.end() ? -1 : state.groups.at(rack->second));
  }
  return groups;
}

class CapacityIndex : public testing::Test {
 protected:
  void upsert(const NodeInfo& info) {
    state_.upsert_node(info);
    if (auto rack = info.labels.find("rack"); rack != info.labels.end()) {
      rack_of_[info.name] = rack->second;
    } else {
      rack_of_.erase(info.name);
    }
  }

  // A ready job in the default share, as Scheduler::queue leaves one.
  void queue(JobId id, int nodes, int cores_per_node) {
    detail::QueuedJob job;
    job.id = id;
    job.share = state_.share_slot("default");
    job.key = detail::JobKey{0, 0, id};
    job.shape = Shape{nodes, cores_per_node};
    job.timeout_s = 3600;
    state_.make_ready(state_.queued.emplace(id, std::move(job)).first->second);
  }

  void expect_as_rebuilt() {
    EXPECT_TRUE(state_.capacity == rebuilt_capacity(state_));
    EXPECT_EQ(state_.group_of, rebuilt_groups(state_, rack_of_));
  }

  detail::State state_;
  std::map<std::string, std::string> rack_of_;
};

TEST_F(CapacityIndex, NodesAddedChangedDrainedUndrainedAndRemoved) {
  upsert(node("a", 8, "r1"));
  upsert(node("b", 16, "r2"));
  upsert(node("c", 4));
  expect_as_rebuilt();
  EXPECT_EQ(state_.capacity.nodes_fitting(Shape{1, 8}), 2);

  NodeInfo drained = node("b", 16, "r2");
  drained.accepts_work = false;
  upsert(drained);
  expect_as_rebuilt();
  EXPECT_EQ(state_.capacity.nodes_fitting(Shape{1, 8}), 1);

  upsert(node("b", 16, "r2"));  // undrained
  expect_as_rebuilt();
  EXPECT_EQ(state_.capacity.nodes_fitting(Shape{1, 8}), 2);

  upsert(node("a", 64, "r2"));  // registered again, larger and in another rack
  expect_as_rebuilt();
  EXPECT_EQ(state_.capacity.nodes_ever_fitting(Shape{1, 32}), 1);

  state_.remove_node("a");
  expect_as_rebuilt();
  EXPECT_EQ(state_.capacity.nodes_ever_fitting(Shape{1, 32}), 0);
  state_.remove_node("never-seen");
  expect_as_rebuilt();

  upsert(node("a", 8, "r1"));  // back
  expect_as_rebuilt();
}

TEST_F(CapacityIndex, WorkStartedByAPassAndEndedFreesTheSameCores) {
  upsert(node("a", 8, "r1"));
  upsert(node("b", 8, "r1"));
  upsert(node("c", 8, "r2"));
  queue(1, 2, 0);  // two whole nodes
  queue(2, 1, 3);
  const PassResult pass = detail::run_pass(state_, at_s(0));
  ASSERT_EQ(pass.starts.size(), 2u);
  expect_as_rebuilt();
  EXPECT_EQ(state_.capacity.free_cores(), 5);
  EXPECT_TRUE(state_.capacity == state_.last.capacity);  // what the pass left is where the index is

  state_.release_running(1, at_s(10));
  expect_as_rebuilt();
  EXPECT_EQ(state_.capacity.free_cores(), 21);
  state_.release_running(2, at_s(10));
  expect_as_rebuilt();
  EXPECT_EQ(state_.capacity.free_cores(), 24);
}

TEST_F(CapacityIndex, WorkOnANodeThatLeftOrShrankStaysCountedAsTheRebuildCountsIt) {
  upsert(node("a", 8));
  state_.hold_running(1, state_.share_slot("default"), {{state_.node_slot("a"), 6}}, 0, at_s(0), 3600);
  // Running work may name a node the scheduler has not been told of (rebuilt after a restart).
  state_.hold_running(2, state_.share_slot("default"), {{state_.node_slot("z"), 4}}, 0, at_s(0), 3600);
  expect_as_rebuilt();

  upsert(node("a", 4));  // fewer cores than its work holds: none free
  expect_as_rebuilt();
  EXPECT_EQ(state_.capacity.free(state_.node_slot("a")), 0);
  state_.remove_node("a");
  expect_as_rebuilt();
  upsert(node("z", 8));
  expect_as_rebuilt();
  EXPECT_EQ(state_.capacity.free(state_.node_slot("z")), 4);

  state_.release_running(1, at_s(5));
  state_.release_running(2, at_s(5));
  expect_as_rebuilt();
  EXPECT_EQ(state_.capacity.free_cores(), 8);
}

// Each share's advance charges as a walk over every running job adds them up.
std::vector<double> walked_expected_usage(const detail::State& state, TimePoint now) {
  std::vector<double> expected(state.shares.size(), 0.0);
  for (const auto& [id, work] : state.running) {
    if (work.charged_until > now) {
      expected[work.share] += work.cores * std::chrono::duration<double>(work.charged_until - now).count();
    }
  }
  return expected;
}

class ExpectedUsage : public CapacityIndex {
 protected:
  void hold(JobId id, const std::string& share, int cores, std::int64_t start_s,
            std::optional<std::int64_t> timeout_s) {
    state_.hold_running(id, state_.share_slot(share), {{state_.node_slot("a"), cores}}, 0, at_s(start_s), timeout_s);
  }

  void expect_as_walked(std::int64_t now_s) {
    const std::vector<double> kept = state_.expected_usage(at_s(now_s));
    const std::vector<double> walked = walked_expected_usage(state_, at_s(now_s));
    ASSERT_EQ(kept.size(), walked.size());
    for (std::size_t share = 0; share < kept.size(); ++share) {
      EXPECT_NEAR(kept[share], walked[share], 1e-6) << "share " << state_.shares[share].name << " at " << now_s << " s";
    }
  }
};

TEST_F(ExpectedUsage, ChargesThatRunOutStartAndEndAsAWalkOverRunningWorkSaysAtAnyTime) {
  state_.config.default_horizon = std::chrono::seconds(100);
  upsert(node("a", 64));
  hold(1, "x", 4, 0, 30);            // charged for 30 s
  hold(2, "x", 2, 0, std::nullopt);  // for the default horizon
  hold(3, "y", 8, 10, 500);          // capped at the horizon
  for (std::int64_t t : {0, 5, 10, 29, 30, 31, 99, 110, 200}) expect_as_walked(t);

  state_.expire_charges(at_s(40));  // a pass: job 1's charge has run out
  for (std::int64_t t : {40, 41, 100, 109, 110, 111}) expect_as_walked(t);
  expect_as_walked(20);  // asked about a time before that pass (a clock that stepped back)
  expect_as_walked(0);

  hold(4, "y", 1, 40, 15);
  state_.release_running(2, at_s(50));
  expect_as_walked(50);
  state_.expire_charges(at_s(60));  // job 4's charge ran out between passes
  expect_as_walked(60);
  state_.release_running(4, at_s(61));  // its charge already left the sums
  state_.release_running(1, at_s(61));
  expect_as_walked(61);
  hold(5, "x", 3, -500, 3600);  // rebuilt after a restart: its charge ran out long ago
  expect_as_walked(62);
  state_.expire_charges(at_s(200));
  expect_as_walked(200);
  EXPECT_TRUE(state_.charging.empty());
  EXPECT_EQ(state_.shares[state_.share_slot("x")].charging_core_ms, 0);
}

TEST_F(ExpectedUsage, PassesStartingAndEndingWorkKeepTheSumsAsAWalkSays) {
  upsert(node("a", 8));
  upsert(node("b", 8));
  queue(1, 1, 8);
  queue(2, 1, 4);
  ASSERT_EQ(detail::run_pass(state_, at_s(0)).starts.size(), 2u);
  expect_as_walked(0);
  expect_as_walked(1800);
  state_.release_running(1, at_s(600));
  queue(3, 1, 2);
  ASSERT_EQ(detail::run_pass(state_, at_s(700)).starts.size(), 1u);
  expect_as_walked(700);
  expect_as_walked(3599);
  expect_as_walked(4300);
}

TEST(TightestFit, IsTheFewestFreeCoresOfAnAcceptingNodeThatFits) {
  Capacity capacity;
  capacity.add_node(32, 32, true);
  capacity.add_node(16, 16, true);
  capacity.add_node(16, 5, true);
  capacity.add_node(8, 3, false);  // fits nothing
  capacity.add_node(8, 8, false);
  EXPECT_EQ(capacity.tightest_fit(Shape{1, 2}), 5);
  EXPECT_EQ(capacity.tightest_fit(Shape{1, 6}), 16);
  EXPECT_EQ(capacity.tightest_fit(Shape{1, 0}), 16);  // whole nodes: the smallest fully free one
  EXPECT_EQ(capacity.tightest_fit(Shape{1, 33}), 0);
  capacity.set_free(1, 10);
  EXPECT_EQ(capacity.tightest_fit(Shape{1, 6}), 10);
  EXPECT_EQ(capacity.tightest_fit(Shape{1, 0}), 32);
  capacity.set_node(0, 32, 0, true);
  EXPECT_EQ(capacity.tightest_fit(Shape{1, 0}), 0);
}

// Best fit for one node skips blocks of nodes none of which fits and stops at the first node as
// tight as any can be: it must choose what a scan of every node chooses (the fewest free cores,
// then the lowest index).
TEST(TightestFit, SingleNodePlacementChoosesWhatAFullScanChooses) {
  std::mt19937 rng(18);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int round = 0; round < 300; ++round) {
    Capacity capacity;
    const int nodes = pick(1, 300);  // several blocks of nodes
    for (int n = 0; n < nodes; ++n) {
      const int total = 8 << pick(0, 2);
      capacity.add_node(total, pick(0, 3) ? 0 : pick(0, total), pick(0, 9) > 0);
    }
    for (int change = pick(0, 20); change > 0; --change) {  // work ended or started since
      const int n = pick(0, nodes - 1);
      capacity.set_free(n, pick(0, 1) ? capacity.total(n) : pick(0, capacity.total(n)));
    }
    const Shape shape{1, pick(0, 1) ? 0 : pick(1, 32)};
    std::vector<int> avoided;
    if (pick(0, 3) == 0) avoided.push_back(pick(0, nodes - 1));
    int best = -1;
    for (int n = 0; n < nodes; ++n) {
      if (!capacity.node_fits(n, shape) || (!avoided.empty() && avoided[0] == n)) continue;
      if (best < 0 || capacity.free(n) < capacity.free(best)) best = n;
    }
    const auto chosen = place(capacity, std::vector<int>(nodes, -1), shape, avoided);
    if (best < 0) {
      // Only an avoided node may fit, and then it is taken rather than wait.
      const bool avoided_fits = !avoided.empty() && capacity.node_fits(avoided[0], shape);
      EXPECT_EQ(chosen, avoided_fits ? std::optional(avoided) : std::nullopt) << "round " << round;
      continue;
    }
    ASSERT_TRUE(chosen) << "round " << round;
    EXPECT_EQ(*chosen, std::vector<int>{best}) << "round " << round;
  }
}

}  // namespace
}  // namespace trainyard::scheduler
