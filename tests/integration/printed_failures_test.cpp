// A job's printed words name its failure's class but never make it the infrastructure's: a job
// that prints an NCCL peer-exited line or "No space left on device" and exits 1 uses its own
// attempts and gets no node excluded, so printing a line buys no free retry.
#include <gtest/gtest.h>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

class PrintedFailures : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster.start_daemon();
    cluster.start_agent("node-a");
    cluster.start_agent("node-b");
    cluster.wait_for_nodes(2);
  }

  Json fails_after_printing(const std::string& line) {
    Json spec = shell_job("printer", "echo '" + line + "' >&2; exit 1", 2);
    spec["retry"] = {{"attempts", 1}};
    const auto id = cluster.submit(spec);
    return cluster.wait_job_state(id, "FAILED", 30s);
  }

  Cluster cluster;
};

TEST_F(PrintedFailures, APrintedNcclPeerExitIsNamedButNotRetriedAsInfrastructure) {
  const Json job = fails_after_printing("NCCL WARN [Service thread] remote process exited or there was a network error");
  EXPECT_EQ(job["failure_class"], "collective_error") << job.dump(2);
  EXPECT_EQ(job["attempts"], 1) << job.dump(2);
  EXPECT_EQ(job.value("excluded_nodes", Json::array()).size(), 0u) << job.dump(2);
}

TEST_F(PrintedFailures, APrintedDiskFullExcludesNoNodeAndUsesTheJobsOwnAttempt) {
  const Json job = fails_after_printing("OSError: [Errno 28] No space left on device");
  EXPECT_EQ(job["failure_class"], "disk_full") << job.dump(2);
  EXPECT_EQ(job["attempts"], 1) << job.dump(2);
  EXPECT_EQ(job.value("excluded_nodes", Json::array()).size(), 0u) << job.dump(2);
  // Both nodes still take work.
  const auto next = cluster.submit(shell_job("after", "true", 2));
  cluster.wait_job_state(next, "SUCCEEDED", 30s);
}

}  // namespace
}  // namespace trainyard::testing
