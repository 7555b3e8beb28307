// The attempts in flight (daemon/attempt_table.h): each job's current attempt, who may speak for
// which rank, and the survivors a resume counts on.
#include "daemon/attempt_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace trainyard::daemon {
namespace {

using ::testing::ElementsAre;

ActiveAttempt active_attempt(AttemptId id, JobId job, std::vector<std::string> nodes) {
  Attempt record;
  record.id = id;
  record.job_id = job;
  record.nodes = std::move(nodes);
  return ActiveAttempt(std::move(record));
}

TEST(AttemptTable, TheNewestAttemptOfAJobIsItsCurrentOneUntilItEnds) {
  AttemptTable table;
  table.add(active_attempt(1, 7, {"n1"}));
  EXPECT_EQ(table.current_id(7), 1);
  table.add(active_attempt(2, 7, {"n2"}));
  EXPECT_EQ(table.current_id(7), 2);
  ASSERT_NE(table.current(7), nullptr);
  EXPECT_EQ(table.current(7)->record.nodes, std::vector<std::string>{"n2"});

  table.remove(1);  // an older attempt ending leaves the current one alone
  EXPECT_EQ(table.current_id(7), 2);
  EXPECT_EQ(table.find(1), nullptr);
  table.remove(2);
  EXPECT_FALSE(table.current_id(7));
  EXPECT_EQ(table.current(7), nullptr);
  EXPECT_EQ(table.size(), 0u);
  table.remove(2);  // twice: nothing to do
}

TEST(AttemptTable, ANodeSpeaksOnlyForTheRankItRunsOfAnAttemptInFlight) {
  AttemptTable table;
  table.add(active_attempt(1, 7, {"n1", "n2"}));
  const auto on = table.rank_on(1, "n2");
  ASSERT_TRUE(on);
  EXPECT_EQ(on->rank, 1);
  EXPECT_EQ(on->attempt, table.find(1));
  EXPECT_FALSE(table.rank_on(1, "n3")) << "a node outside the gang";
  EXPECT_FALSE(table.rank_on(2, "n1")) << "an attempt not (or no longer) in flight";
  table.find(1)->ranks[0].exited = true;
  EXPECT_FALSE(table.find(1)->all_exited());
  table.find(1)->ranks[1].exited = true;
  EXPECT_TRUE(table.find(1)->all_exited());
}

TEST(AttemptTable, SurvivorsAreKeptPerJobUntilForgotten) {
  AttemptTable table;
  table.set_survivors(7, {"n1", "n2"});
  table.set_survivors(8, {"n2", "n3"});
  table.set_survivors(9, {});  // all of its nodes failed it: its resume takes spares only
  ASSERT_NE(table.survivors(7), nullptr);
  EXPECT_THAT(*table.survivors(7), ElementsAre("n1", "n2"));
  ASSERT_NE(table.survivors(9), nullptr);
  EXPECT_EQ(table.survivors(10), nullptr);
  EXPECT_THAT(table.survivor_nodes(), ElementsAre("n1", "n2", "n3"));
  table.forget_survivors(7);
  EXPECT_EQ(table.survivors(7), nullptr);
  EXPECT_THAT(table.survivor_nodes(), ElementsAre("n2", "n3"));
}

}  // namespace
}  // namespace trainyard::daemon
