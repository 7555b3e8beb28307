// Storage end to end: a simulated job writing checkpoints past its storage_limit_mb has its oldest
// ones pruned by the daemon, keeps the newest, and gets the event; one whose checkpoints cannot be
// written is told; nodes report their free disk space; a job writing below the agent's disk floor is
// stopped.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

TEST(Storage, AJobOverItsQuotaLosesItsOldestCheckpointsKeepsTheNewestAndIsTold) {
  Cluster cluster;
  cluster.start_daemon();
  cluster.start_agent("trn-0");
  cluster.wait_for_nodes(1);
  // Width 256: each checkpoint is about 0.9 MiB, so eight of them are far over 2 MiB; the kernel
  // itself would keep all eight (keep_checkpoints 10).
  const auto id = cluster.submit({{"name", "big-checkpoints"},
                                  {"nodes", 1},
                                  {"kind", "simulated"},
                                  {"storage_limit_mb", 2},
                                  {"workload",
                                   {{"width", 256},
                                    {"steps", 40},
                                    {"checkpoint_every", 5},
                                    {"keep_checkpoints", 10},
                                    {"step_ms", 50}}}});
  const std::string job = "/v1/jobs/" + std::to_string(id);
  cluster.wait_job_state(id, "SUCCEEDED", 90s);

  const Json checkpoints = cluster.api("GET", job + "/checkpoints").body["checkpoints"];
  ASSERT_FALSE(checkpoints.empty());
  EXPECT_EQ(checkpoints.back()["step"], 40) << "the newest checkpoint is kept: " << checkpoints.dump();
  EXPECT_TRUE(checkpoints.back()["valid"].get<bool>()) << checkpoints.dump();
  EXPECT_GT(checkpoints.front()["step"].get<int>(), 5) << "the oldest were pruned: " << checkpoints.dump();
  EXPECT_LT(checkpoints.size(), 8u) << checkpoints.dump();

  const Json events =
      cluster.api("GET", "/v1/events?type=job.storage_over_quota&job=" + std::to_string(id)).body["events"];
  ASSERT_FALSE(events.empty()) << cluster.daemon_log();
  EXPECT_EQ(events[0]["severity"], "warning");
  EXPECT_FALSE(events[0]["details"]["pruned_steps"].empty()) << events.dump();
  EXPECT_EQ(events[0]["details"]["job_limit_mb"], 2);

  const Json storage = cluster.api("GET", job).body["storage"];
  EXPECT_EQ(storage["limit_mb"], 2) << storage.dump();
  EXPECT_GT(storage["checkpoint_bytes"].get<std::int64_t>(), 0) << storage.dump();
  const Json shares = cluster.api("GET", "/v1/shares").body["shares"];
  bool listed = false;
  for (const Json& share : shares) {
    if (share["name"] == "default") listed = share["storage_checkpoint_bytes"].get<std::int64_t>() > 0;
  }
  EXPECT_TRUE(listed) << shares.dump();
}

// Its checkpoints failing, a job trains on (a retry would start over): an event and its attempt
// say so, not only a line in its rank's log. Needs a root agent, which runs the rank as the job's
// own account.
TEST(Storage, AJobWhoseCheckpointsCannotBeWrittenTrainsOnAndSaysSo) {
  if (::geteuid() != 0) GTEST_SKIP() << "the agent must be root to run jobs as other accounts";
  Cluster cluster;
  // A checkpoint root under a directory only root may enter (as under a mkdtemp directory): the
  // agent makes the job's directory there, and the job's account cannot reach it.
  const std::string locked = cluster.dir() + "/locked";
  std::filesystem::create_directory(locked);
  std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
  const std::string root = locked + "/ckpt";
  cluster.start_daemon({"--checkpoint-root", root});
  cluster.start_agent("trn-0");
  cluster.wait_for_nodes(1);
  const auto id = cluster.submit({{"name", "unwritable"},
                                  {"nodes", 1},
                                  {"kind", "simulated"},
                                  {"workload", {{"steps", 20}, {"checkpoint_every", 5}, {"step_ms", 20}}}});
  const std::string job = "/v1/jobs/" + std::to_string(id);
  cluster.wait_job_state(id, "SUCCEEDED", 60s);

  const Json attempt = cluster.api("GET", job + "/attempts").body["attempts"][0];
  ASSERT_TRUE(attempt.contains("checkpoint_failures")) << attempt.dump();
  EXPECT_GE(attempt["checkpoint_failures"]["count"].get<int>(), 1) << attempt.dump();
  EXPECT_NE(attempt["checkpoint_failures"]["last_error"].get<std::string>().find("Permission denied"),
            std::string::npos)
      << attempt.dump();
  const Json events =
      cluster.api("GET", "/v1/events?type=job.checkpoint_failed&job=" + std::to_string(id)).body["events"];
  ASSERT_EQ(events.size(), 1u) << events.dump() << cluster.daemon_log();
  EXPECT_EQ(events[0]["severity"], "warning");
  EXPECT_EQ(events[0]["node"], "trn-0");
  EXPECT_TRUE(cluster.api("GET", job + "/checkpoints").body["checkpoints"].empty());
}

TEST(Storage, NodesReportTheirFreeDiskSpaceAndAThresholdAboveItMakesThemSuspect) {
  Cluster cluster;
  // No test machine has a petabyte free: every node is short of space.
  cluster.start_daemon({"--min-free-disk-mb", "1000000000"});
  cluster.start_agent("trn-0");
  ASSERT_TRUE(eventually(
      [&] {
        // Until the agent registers the answer is a 404 without "state"; a const Json's
        // operator[] on a missing key is undefined, so read it with value().
        const Json node = cluster.api("GET", "/v1/nodes/trn-0").body;
        return node.value("state", "") == "SUSPECT" && node.value("state_reason", "").find("low disk space") != std::string::npos;
      },
      30s))
      << cluster.api("GET", "/v1/nodes/trn-0").body.dump();
  const Json node = cluster.api("GET", "/v1/nodes/trn-0").body;
  ASSERT_FALSE(node["disks"].empty()) << node.dump();
  EXPECT_EQ(node["disks"][0]["role"], "work");
  EXPECT_GT(node["disks"][0]["total_mb"].get<std::int64_t>(), 0);
}

// No test machine has a petabyte free either: below the agent's floor, the job writing its work
// directory is stopped and fails as its own disk_full, not retried elsewhere as the node's.
TEST(Storage, AJobWritingBelowTheAgentsDiskFloorIsStoppedAsItsOwnDiskFull) {
  Cluster cluster;
  cluster.start_daemon();
  cluster.start_agent("trn-0", {.extra_flags = {"--job-disk-floor-mb", "1000000000"}});
  cluster.wait_for_nodes(1);
  Json spec = shell_job("writer", "while :; do echo line; sleep 0.05; done");
  spec["retry"] = {{"attempts", 1}};
  const auto id = cluster.submit(spec);
  const Json job = cluster.wait_job_state(id, "FAILED", 30s);
  EXPECT_EQ(job["failure_class"], "disk_full") << job.dump();
  const Json attempts = attempts_of(cluster, id);
  ASSERT_EQ(attempts.size(), 1u) << attempts.dump();
  EXPECT_FALSE(attempts[0].value("infrastructure", false)) << attempts.dump();
  EXPECT_EQ(attempts[0]["reason"].get<std::string>().rfind("job disk floor: ", 0), 0u) << attempts.dump();
}

}  // namespace
}  // namespace trainyard::testing
