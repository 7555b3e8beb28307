#include <gtest/gtest.h>

#include "proto/workload_memory.h"
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
  EXPECT_EQ(p.memory_mb, 0) << "a command job that names no memory asks for none";
}

TEST(Types, APendingJobAsksForItsMemoryPerRankOrWhatItsSimulatedSpecNeeds) {
  Job job;
  job.spec.kind = JobKind::command;
  job.spec.memory_mb = 2048;
  EXPECT_EQ(pending_job(job).memory_mb, 2048);
  job.spec.kind = JobKind::simulated;
  job.spec.nodes = 2;
  job.spec.memory_mb.reset();
  EXPECT_EQ(pending_job(job).memory_mb, simulated_rank_memory_mb(job.spec.workload, 2));
  EXPECT_GT(pending_job(job).memory_mb, 0);
}

TEST(Types, OnlyHealthyConnectedNodesAcceptWork) {
  Node n;
  n.name = "trn-1";
  n.cores = 32;
  n.labels = {{"rack", "r1"}};
  n.connected = true;
  EXPECT_TRUE(node_info(n).accepts_work);
  EXPECT_EQ(node_info(n).labels.at("rack"), "r1");
  n.memory_mb = 65536;
  EXPECT_EQ(node_info(n).memory_mb, 65536);
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
