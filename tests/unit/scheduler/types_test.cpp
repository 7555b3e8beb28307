#include <gtest/gtest.h>

#include "scheduler/types.h"

namespace trainyard::scheduler {
namespace {

TEST(Types, PendingJobCarriesWhatTheSchedulerNeedsFromAJob) {
  Job job;
  job.id = 42;
  job.spec.share = "vision";
  job.spec.priority = 7;
  job.spec.nodes = 4;
  job.spec.cores_per_node = 16;
  job.spec.timeout_s = 900;
  job.submitted_at = from_unix_ms(1000);
  job.not_before = from_unix_ms(5000);
  const PendingJob p = pending_job(job);
  EXPECT_EQ(p.id, 42);
  EXPECT_EQ(p.share, "vision");
  EXPECT_EQ(p.priority, 7);
  EXPECT_EQ(p.nodes, 4);
  EXPECT_EQ(p.cores_per_node, 16);
  EXPECT_EQ(p.timeout_s, 900);
  EXPECT_EQ(p.submitted_at, from_unix_ms(1000));
  EXPECT_EQ(p.not_before, from_unix_ms(5000));
}

TEST(Types, OnlyHealthyConnectedNodesAcceptWork) {
  Node n;
  n.name = "trn-1";
  n.cores = 32;
  n.labels = {{"rack", "r1"}};
  n.connected = true;
  EXPECT_TRUE(node_info(n).accepts_work);
  EXPECT_EQ(node_info(n).labels.at("rack"), "r1");
  n.state = NodeState::suspect;
  EXPECT_FALSE(node_info(n).accepts_work);
  n.state = NodeState::healthy;
  n.connected = false;
  EXPECT_FALSE(node_info(n).accepts_work);
}

TEST(Types, ReasonCodesHaveStableNames) {
  EXPECT_EQ(to_string(ReasonCode::resources), "resources");
  EXPECT_EQ(to_string(ReasonCode::share_cap), "share_cap");
  EXPECT_EQ(to_string(ReasonCode::compute_reservation), "compute_reservation");
}

}  // namespace
}  // namespace trainyard::scheduler
