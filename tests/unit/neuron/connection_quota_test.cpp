#include "neuron/connection_quota.h"

#include <gtest/gtest.h>

namespace trainyard::neuron {
namespace {

TEST(ConnectionQuotaTest, RoomWhileUnderBothCaps) {
  ConnectionQuota quota({4, 2});
  EXPECT_EQ(quota.to_drop_for("10.0.0.1"), std::nullopt);
  quota.add(10, "10.0.0.1");
  EXPECT_EQ(quota.to_drop_for("10.0.0.1"), std::nullopt);
  quota.add(11, "10.0.0.2");
  EXPECT_EQ(quota.held(), 2u);
  EXPECT_EQ(quota.held_from("10.0.0.1"), 1u);
}

TEST(ConnectionQuotaTest, ASourceAtItsCapDropsItsOwnOldest) {
  ConnectionQuota quota({100, 3});
  for (int id : {1, 2, 3}) quota.add(id, "flood");
  quota.add(4, "peer");
  EXPECT_EQ(quota.to_drop_for("flood"), 1);
  EXPECT_EQ(quota.to_drop_for("peer"), std::nullopt) << "another source is not limited by the flood's cap";
  quota.remove(1);
  quota.add(5, "flood");
  EXPECT_EQ(quota.to_drop_for("flood"), 2) << "oldest first: the newest, still saying hello, is kept";
}

TEST(ConnectionQuotaTest, AFullPoolDropsFromTheSourceHoldingMost) {
  ConnectionQuota quota({4, 4});
  quota.add(1, "peer");
  for (int id : {2, 3, 4}) quota.add(id, "flood");
  // The peer's connection is the oldest of all, yet the flood makes room for the peer's next one.
  EXPECT_EQ(quota.to_drop_for("peer"), 2);
  EXPECT_EQ(quota.to_drop_for("third"), 2);
  EXPECT_EQ(quota.to_drop_for("flood"), 2);
}

TEST(ConnectionQuotaTest, RemovedAndUnknownIdsAreForgotten) {
  ConnectionQuota quota({2, 2});
  quota.add(1, "a");
  quota.add(2, "a");
  quota.remove(1);
  quota.remove(99);
  EXPECT_EQ(quota.held(), 1u);
  EXPECT_EQ(quota.to_drop_for("a"), std::nullopt);
  quota.remove(2);
  EXPECT_EQ(quota.held_from("a"), 0u);
}

TEST(ConnectionQuotaTest, CapsOfZeroStillHoldOne) {
  ConnectionQuota quota({0, 0});
  EXPECT_EQ(quota.to_drop_for("a"), std::nullopt);
  quota.add(1, "a");
  EXPECT_EQ(quota.to_drop_for("a"), 1);
}

}  // namespace
}  // namespace trainyard::neuron
