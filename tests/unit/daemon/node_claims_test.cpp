// A node is believed about itself only within bounds: cores and memory under the daemon's flags,
// and a data address on the address its connection comes from.
#include <gtest/gtest.h>

#include "daemon/nodes/node_claims.h"

namespace trainyard::daemon {
namespace {

HelloMsg hello(int cores, std::int64_t memory_mb, std::string data_addr) {
  HelloMsg h;
  h.name = "n1";
  h.cores = cores;
  h.memory_mb = memory_mb;
  h.data_addr = std::move(data_addr);
  return h;
}

std::string claim_refused_field(const HelloMsg& h, const std::string& remote, NodeClaimLimits limits = {}) {
  const Result<void> believed = check_node_claims(h, remote, limits);
  return believed ? "(believed)" : believed.error().field;
}

TEST(NodeClaims, AnHonestNodeIsBelieved) {
  EXPECT_EQ(claim_refused_field(hello(32, 256 * 1024, "10.0.0.5:41000"), "10.0.0.5:52311"), "(believed)");
  EXPECT_EQ(claim_refused_field(hello(32, 0, "[::1]:41000"), "::1:52311"), "(believed)");
  EXPECT_EQ(claim_refused_field(hello(32, 0, "127.0.0.1:41000"), "::ffff:127.0.0.1:52311"), "(believed)");
  EXPECT_EQ(claim_refused_field(hello(1, 0, ""), "10.0.0.5:52311"), "(believed)") << "no data plane claimed";
}

TEST(NodeClaims, CoresAndMemoryOverTheFlagsAreRefusedNamingTheFlag) {
  EXPECT_EQ(claim_refused_field(hello(4096, 0, ""), "10.0.0.5:1"), "cores");
  const Result<void> r = check_node_claims(hello(4096, 0, ""), "10.0.0.5:1", {});
  EXPECT_NE(r.error().message.find("--max-node-cores"), std::string::npos) << r.error().message;
  EXPECT_EQ(claim_refused_field(hello(64, 2048, ""), "10.0.0.5:1", {64, 1024}), "memory_mb");
  EXPECT_EQ(claim_refused_field(hello(64, 1024, ""), "10.0.0.5:1", {64, 1024}), "(believed)");
}

TEST(NodeClaims, ADataAddressOnAnotherHostOrNotAnAddressIsRefused) {
  EXPECT_EQ(claim_refused_field(hello(8, 0, "10.0.0.6:41000"), "10.0.0.5:52311"), "data_addr");
  EXPECT_EQ(claim_refused_field(hello(8, 0, "127.0.0.1:22"), "10.0.0.5:52311"), "data_addr");
  EXPECT_EQ(claim_refused_field(hello(8, 0, "db.internal:5432"), "10.0.0.5:52311"), "data_addr");
  EXPECT_EQ(claim_refused_field(hello(8, 0, "10.0.0.5:41000"), "?"), "data_addr") << "an unknown remote proves nothing";
}

}  // namespace
}  // namespace trainyard::daemon
