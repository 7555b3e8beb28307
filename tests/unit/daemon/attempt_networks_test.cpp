#include <gtest/gtest.h>

#include "daemon/policy/attempt_networks.h"
#include "daemon/policy/job_address_pool.h"

namespace trainyard::daemon {
namespace {

Ipv4Network network(const char* text) { return parse_ipv4_network(text, "test"); }

TEST(JobAddressPool, BlocksAreAlignedPowersOfTwoTakenLowestFirst) {
  JobAddressPool pool(network("10.240.0.0/24"));
  EXPECT_EQ(pool.take(1)->text(), "10.240.0.0/32");
  EXPECT_EQ(pool.take(3)->text(), "10.240.0.4/30") << "4 addresses, aligned past the one taken";
  EXPECT_EQ(pool.take(2)->text(), "10.240.0.2/31") << "the gap before it fits";
  EXPECT_EQ(pool.take(5)->text(), "10.240.0.8/29");
  pool.give_back(network("10.240.0.4/30"));
  EXPECT_EQ(pool.take(4)->text(), "10.240.0.4/30") << "a block given back is taken again";
  EXPECT_EQ(pool.take(256), std::nullopt) << "larger than what is left";
}

TEST(JobAddressPool, AFullPoolTakesNothingUntilABlockComesBack) {
  JobAddressPool pool(network("10.240.0.0/28"));
  EXPECT_EQ(pool.take(16)->text(), "10.240.0.0/28");
  EXPECT_EQ(pool.take(1), std::nullopt);
  EXPECT_EQ(pool.take(17), std::nullopt) << "more than the pool holds";
  pool.give_back(network("10.240.0.0/28"));
  EXPECT_EQ(pool.take(1)->text(), "10.240.0.0/32");
}

TEST(JobAddressPool, ARestoredBlockStaysTakenAndOverlapsAreRefused) {
  JobAddressPool pool(network("10.240.0.0/24"));
  EXPECT_TRUE(pool.mark_taken(network("10.240.0.0/30")));
  EXPECT_FALSE(pool.mark_taken(network("10.240.0.2/31"))) << "inside a taken block";
  EXPECT_FALSE(pool.mark_taken(network("10.240.0.0/29"))) << "around a taken block";
  EXPECT_FALSE(pool.mark_taken(network("10.241.0.0/30"))) << "outside the pool";
  EXPECT_EQ(pool.take(2)->text(), "10.240.0.4/31");
}

TEST(AttemptNetworks, EachRankGetsAnAddressOfItsAttemptsBlockUntilTheAttemptGoes) {
  AttemptNetworks networks(network("10.240.0.0/16"));
  std::string why;
  const auto first = networks.assign(7, 3, why);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->pool.text(), "10.240.0.0/16");
  EXPECT_EQ(first->block.text(), "10.240.0.0/30");
  ASSERT_EQ(first->addresses.size(), 3u);
  EXPECT_EQ(ipv4_text(first->addresses[2]), "10.240.0.2");
  EXPECT_EQ(networks.assign(8, 2, why)->block.text(), "10.240.0.4/31");
  networks.release(7);
  EXPECT_EQ(networks.assign(9, 4, why)->block.text(), "10.240.0.0/30");
  networks.release(42);  // never had one: nothing happens
}

TEST(AttemptNetworks, WithoutAPoolAttemptsShareTheirNodesNetwork) {
  AttemptNetworks networks(std::nullopt);
  std::string why;
  EXPECT_FALSE(networks.enabled());
  EXPECT_FALSE(networks.assign(1, 2, why));
  EXPECT_TRUE(networks.restore(1, Json{{"network", {{"block", "10.240.0.0/30"}}}}));
}

TEST(AttemptNetworks, AnExhaustedPoolSaysWhy) {
  AttemptNetworks networks(network("10.240.0.0/28"));
  std::string why;
  ASSERT_TRUE(networks.assign(1, 16, why));
  EXPECT_FALSE(networks.assign(2, 1, why));
  EXPECT_NE(why.find("10.240.0.0/28"), std::string::npos) << why;
}

TEST(AttemptNetworks, ARestartTakesBackTheBlocksOfStoredAttempts) {
  AttemptNetworks networks(network("10.240.0.0/16"));
  const JobNetworkPlan before{network("10.240.0.0/16"), network("10.240.0.0/31"),
                              {*parse_ipv4("10.240.0.0"), *parse_ipv4("10.240.0.1")}};
  const Json provenance = {{"job", 1}, {"network", network_provenance(before)}};
  EXPECT_EQ(provenance["network"]["addresses"][1], "10.240.0.1");
  EXPECT_TRUE(networks.restore(3, provenance));
  EXPECT_TRUE(networks.restore(4, Json{{"job", 2}})) << "an attempt that shared its nodes' network";
  EXPECT_FALSE(networks.restore(5, provenance)) << "a block another attempt holds";
  EXPECT_FALSE(networks.restore(6, Json{{"network", {{"block", "not a network"}}}}));
  std::string why;
  EXPECT_EQ(networks.assign(7, 2, why)->block.text(), "10.240.0.2/31") << "not the restored attempt's";
  networks.release(3);
  EXPECT_EQ(networks.assign(8, 2, why)->block.text(), "10.240.0.0/31");
}

}  // namespace
}  // namespace trainyard::daemon
