#include "daemon/share_table.h"

#include <gtest/gtest.h>

namespace trainyard::daemon {
namespace {

const TimePoint kAt = TimePoint(std::chrono::seconds(1'800'000'000));

TEST(ShareTable, AnAdminsShareKeepsItsSettingsAndMembersInItsRecord) {
  ShareTable table;
  table.set("team", {2.5, 64, 1024}, std::vector<std::string>{"alice", "bob"});
  ASSERT_TRUE(table.created("team"));
  ASSERT_NE(table.members("team"), nullptr);
  EXPECT_EQ(*table.members("team"), (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ(table.storage_limit_mb("team"), 1024);

  const store::ShareRecord record = table.record("team", 12.5, kAt);
  EXPECT_TRUE(record.created);
  EXPECT_DOUBLE_EQ(record.weight, 2.5);
  EXPECT_EQ(record.max_running_cores, 64);
  EXPECT_EQ(record.storage_limit_mb, 1024);
  EXPECT_EQ(record.members, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_DOUBLE_EQ(record.usage_core_s, 12.5);
  EXPECT_EQ(record.usage_at, kAt);
}

TEST(ShareTable, AShareOpenedToEveryoneLosesItsMembers) {
  ShareTable table;
  table.set("team", {}, std::vector<std::string>{"alice"});
  table.set("team", {}, std::nullopt);
  EXPECT_TRUE(table.created("team"));
  EXPECT_EQ(table.members("team"), nullptr);
  EXPECT_EQ(table.record("team", 0, kAt).members, std::nullopt);
}

TEST(ShareTable, AUsageRowIsNoAdminsShareAndItsRecordCarriesOnlyTheUsage) {
  ShareTable table;
  store::ShareRecord usage_only;
  usage_only.name = "default";
  usage_only.weight = 7;  // a row without `created` says nothing about settings
  table.restore(usage_only);
  EXPECT_FALSE(table.created("default"));
  EXPECT_EQ(table.storage_limit_mb("default"), std::nullopt);

  const store::ShareRecord record = table.record("default", 3, kAt);
  EXPECT_FALSE(record.created);
  EXPECT_DOUBLE_EQ(record.weight, 1.0) << "the default weight, not one from a row that was never an admin's";
  EXPECT_DOUBLE_EQ(record.usage_core_s, 3);
}

TEST(ShareTable, ARestoredShareIsTheOneThatWasStoredAndADeletedOneIsGone) {
  ShareTable before;
  before.set("team", {3, std::nullopt, 50}, std::vector<std::string>{"carol"});
  const store::ShareRecord stored = before.record("team", 1, kAt);

  ShareTable after;
  after.restore(stored);
  EXPECT_EQ(after.record("team", 1, kAt), stored);

  after.erase("team");
  EXPECT_FALSE(after.created("team"));
  EXPECT_EQ(after.members("team"), nullptr);
}

}  // namespace
}  // namespace trainyard::daemon
