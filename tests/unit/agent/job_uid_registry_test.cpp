// The host's record of which cluster's job holds each per-job uid (issue 56): a uid is claimed once
// and stays its job's; another cluster's job, or another job of the same cluster, is refused it.
#include "agent/job_uid_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "tests/support/temp_dir.h"

namespace trainyard::agent {
namespace {

using ::testing::HasSubstr;

TEST(JobUidRegistry, AUidStaysItsFirstJobsAndAnotherClustersJobIsRefusedIt) {
  const TempDir dir;
  const std::string registry = (dir.path() / "job-uids").string();
  EXPECT_FALSE(claim_job_uid(registry, 1610612737, "0a1b2c3d4e5f6071", 1)) << "first claim";
  EXPECT_FALSE(claim_job_uid(registry, 1610612737, "0a1b2c3d4e5f6071", 1)) << "its next attempt";
  const auto refused = claim_job_uid(registry, 1610612737, "", 1);
  ASSERT_TRUE(refused) << "an older database's job 1";
  EXPECT_THAT(*refused, HasSubstr("uid 1610612737 on this node belongs to job 1 of cluster 0a1b2c3d4e5f6071"));
  EXPECT_TRUE(claim_job_uid(registry, 1610612737, "0a1b2c3d4e5f6071", 2)) << "another job of the same cluster";
  EXPECT_FALSE(claim_job_uid(registry, 1610612738, "", 1)) << "another uid is free";
  EXPECT_TRUE(claim_job_uid(registry, 1610612738, "0a1b2c3d4e5f6071", 1));
}

// Agents of one host claim at once: exactly one of them gets the uid.
TEST(JobUidRegistry, OneOfManyClaimingAtOnceGetsTheUid) {
  const TempDir dir;
  const std::string registry = dir.path().string();
  std::vector<std::optional<std::string>> results(8);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = claim_job_uid(registry, 42, "00000000000000" + std::to_string(10 + i), 1); });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(std::ranges::count_if(results, [](const auto& held) { return !held; }), 1);
}

TEST(JobUidRegistry, ARegistryThatCannotBeWrittenThrows) {
  EXPECT_THROW(claim_job_uid("/proc/no-such-registry", 42, "", 1), std::runtime_error);
}

}  // namespace
}  // namespace trainyard::agent
