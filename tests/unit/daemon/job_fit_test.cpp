// A job that no registered nodes could ever hold is refused at submission, naming the
// field and saying what the cluster has, unless its spec asks to wait for capacity.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/policy/job_fit.h"
#include "proto/workload_memory.h"
#include "proto/errors.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

JobSpec shaped(int nodes, std::optional<int> cores_per_node = std::nullopt) {
  JobSpec spec = command_spec(nodes);
  spec.cores_per_node = cores_per_node;
  return spec;
}

// The refusal's field and message, or "fits", for a cluster of nodes with these core counts.
std::pair<std::string, std::string> verdict(const JobSpec& spec, const std::vector<int>& node_cores) {
  NodeCoreCounts nodes_by_cores;
  for (int cores : node_cores) ++nodes_by_cores[cores];
  const Result<void> fits = can_ever_fit(spec, nodes_by_cores);
  if (!fits) return {fits.error().field, fits.error().message};
  return {"fits", ""};
}

TEST(JobFit, AJobThatFitsSomeSetOfRegisteredNodesIsAccepted) {
  EXPECT_EQ(verdict(shaped(1), {32}).first, "fits");
  EXPECT_EQ(verdict(shaped(3), {32, 32, 4}).first, "fits") << "whole-node jobs take any node";
  EXPECT_EQ(verdict(shaped(2, 32), {32, 4, 32}).first, "fits");
  EXPECT_EQ(verdict(shaped(1, 32), {4, 32}).first, "fits");
}

TEST(JobFit, MoreNodesThanAreRegisteredNamesNodes) {
  const auto [field, message] = verdict(shaped(5), {32, 32, 32});
  EXPECT_EQ(field, "nodes");
  EXPECT_THAT(message, HasSubstr("requested node configuration is not available"));
  EXPECT_THAT(message, HasSubstr("5 nodes asked, and 3 nodes are registered"));
  EXPECT_THAT(message, HasSubstr("wait_for_capacity"));
}

TEST(JobFit, MoreCoresPerNodeThanAnyNodeHasNamesCoresPerNode) {
  const auto [field, message] = verdict(shaped(1, 64), {32, 16});
  EXPECT_EQ(field, "cores_per_node");
  EXPECT_THAT(message, HasSubstr("64 cores per node asked, and the largest registered node has 32"));
}

TEST(JobFit, TooFewNodesLargeEnoughNamesNodesAndSaysHowManyAre) {
  const auto [field, message] = verdict(shaped(3, 8), {32, 32, 4});
  EXPECT_EQ(field, "nodes");
  EXPECT_THAT(message, HasSubstr("3 nodes asked, and 3 nodes are registered, 2 with 8 cores or more"));
}

TEST(JobFit, AnEmptyClusterFitsNothing) {
  const auto [field, message] = verdict(shaped(1), {});
  EXPECT_EQ(field, "nodes");
  EXPECT_THAT(message, HasSubstr("no node is registered yet"));
}

TEST(JobFit, ASpecThatWaitsForCapacityIsAlwaysAccepted) {
  JobSpec spec = shaped(64, 128);
  spec.wait_for_capacity = true;
  EXPECT_EQ(verdict(spec, {}).first, "fits");
  EXPECT_EQ(verdict(spec, {32}).first, "fits");
}

TEST(JobFitSubmit, EveryRegisteredNodeCountsWhateverItsStateAndARefusedJobIsNotStored) {
  Cluster c;
  c.connect("n1", 8);
  c.connect("n2", 8);
  bool drained = false;
  c.jobs.drain("n2", "maintenance", false, [&](const Result<Node>& node) { drained = node.ok(); });
  c.settle();
  ASSERT_TRUE(drained);
  const Job waiting = c.submit(command_spec(2));  // n2 comes back from maintenance
  EXPECT_EQ(waiting.state, JobState::pending);

  std::vector<Error> refusals;
  const auto refused = [&](Result<JobManager::Submitted> accepted) {
    ASSERT_FALSE(accepted) << "accepted job " << accepted->job.id;
    refusals.push_back(accepted.error());
  };
  c.jobs.submit(command_spec(3), "alice", refused);
  JobSpec wide = command_spec(1);
  wide.cores_per_node = 16;
  c.jobs.submit(wide, "alice", refused);
  ASSERT_EQ(refusals.size(), 2u) << "refused at once, before anything is stored";
  EXPECT_EQ(refusals[0].code, ErrorCode::invalid_input);
  EXPECT_EQ(refusals[0].field, "nodes");
  EXPECT_EQ(refusals[1].field, "cores_per_node");
  c.settle();
  EXPECT_FALSE(c.stored_job(waiting.id + 1)) << "a refused job was stored";
  EXPECT_EQ(c.jobs.pending_count(), 1u);
  const Job next = c.submit(command_spec(1));
  EXPECT_EQ(next.id, waiting.id + 1) << "a refused job used up an id";
}

TEST(JobFitSubmit, AJobThatWaitsForCapacityStartsWhenNodesJoin) {
  Cluster c;
  JobSpec spec = command_spec(2);
  spec.wait_for_capacity = true;
  const Job job = c.submit(spec);
  EXPECT_EQ(job.state, JobState::pending);
  EXPECT_EQ(c.stored_job(job.id)->spec.wait_for_capacity, true) << "stored with the spec";
  c.connect("n1");
  c.connect("n2");
  EXPECT_EQ(c.stored_attempts(job.id).size(), 1u);
}

// The refusal's message for memory, or "fits", on nodes reporting these MiB (0: unknown).
std::string memory_verdict(int nodes, std::int64_t memory_mb, const std::vector<std::int64_t>& node_memory_mb) {
  JobSpec spec = command_spec(nodes);
  spec.memory_mb = memory_mb;
  const Result<void> fits = memory_can_ever_fit(spec, node_memory_mb);
  if (fits) return "fits";
  EXPECT_EQ(fits.error().field, "memory_mb");
  return fits.error().message;
}

TEST(JobFit, MoreMemoryThanEnoughNodesReportNamesMemoryMb) {
  EXPECT_EQ(memory_verdict(1, 4096, {8192}), "fits");
  EXPECT_EQ(memory_verdict(2, 4096, {8192, 0}), "fits") << "a node reporting no memory could have any";
  EXPECT_THAT(memory_verdict(1, 16384, {8192, 4096}),
              HasSubstr("16384 MiB per node asked on 1 node, and 0 nodes of 2 nodes registered have that much "
                        "(the largest reports 8192 MiB)"));
  EXPECT_THAT(memory_verdict(2, 8192, {8192, 4096}), HasSubstr("1 node of 2 nodes registered has that much"));
  JobSpec waiting = command_spec(1);
  waiting.memory_mb = 16384;
  waiting.wait_for_capacity = true;
  EXPECT_TRUE(memory_can_ever_fit(waiting, {8192}));
}

TEST(JobFit, ASimulatedSpecWithoutMemoryMbMustFitWhatItsKernelNeeds) {
  JobSpec spec = command_spec(1);
  spec.kind = JobKind::simulated;
  spec.workload.width = 4096;
  spec.workload.depth = 16;
  const std::int64_t needs = simulated_rank_memory_mb(spec.workload, 1);
  EXPECT_TRUE(memory_can_ever_fit(spec, {needs}));
  const Result<void> refused = memory_can_ever_fit(spec, {needs - 1, 512});
  ASSERT_FALSE(refused) << "a spec no node can hold was accepted";
  EXPECT_EQ(refused.error().field, "workload");
  EXPECT_THAT(refused.error().message, HasSubstr("the simulated spec needs " + std::to_string(needs) + " MiB per rank"));
  spec.memory_mb = needs / 2;  // the user's own bound is what counts then
  EXPECT_TRUE(memory_can_ever_fit(spec, {needs - 1}));
}

}  // namespace
}  // namespace trainyard::daemon::testing
