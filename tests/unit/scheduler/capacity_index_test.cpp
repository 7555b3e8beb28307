// The scheduler's capacity index and placement groups are kept up to date as nodes and work change
// (issue 18 item 3) rather than rebuilt for every pass: after every kind of change they must equal
// what a rebuild from the node slots gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

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
  state_.hold_running(1, state_.share_slot("default"), {{state_.node_slot("a"), 6}}, at_s(0), 3600);
  // Running work may name a node the scheduler has not been told of (rebuilt after a restart).
  state_.hold_running(2, state_.share_slot("default"), {{state_.node_slot("z"), 4}}, at_s(0), 3600);
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

}  // namespace
}  // namespace trainyard::scheduler
