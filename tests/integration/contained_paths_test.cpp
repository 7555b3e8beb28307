// The agent builds no path from a launch that leaves its roots (agent/launch_paths.h): a
// checkpoint directory outside its --checkpoint-root, or a symlink planted where an attempt's
// directory goes, makes it refuse the launch instead of writing elsewhere.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

Json checkpointing_job(const std::string& name) {
  return Json{{"name", name},
              {"nodes", 1},
              {"kind", "simulated"},
              {"workload", {{"steps", 20}, {"step_ms", 5}, {"checkpoint_every", 5}}}};
}

class ContainedPaths : public ::testing::Test {
 protected:
  void start(const std::vector<std::string>& agent_flags, const std::vector<std::string>& daemon_flags = {}) {
    cluster.start_daemon(daemon_flags);
    cluster.start_agent("node-a", AgentSpec{.extra_flags = agent_flags});
    cluster.wait_for_nodes(1);
  }
  std::string attempts_of(std::int64_t job) {
    return cluster.api("GET", "/v1/jobs/" + std::to_string(job) + "/attempts").body.dump();
  }
  std::string agent_log() { return read_text(cluster.dir() + "/agent-node-a.log"); }

  Cluster cluster;
};

TEST_F(ContainedPaths, CheckpointsUnderTheAgentsCheckpointRootAreWritten) {
  start({"--checkpoint-root", cluster.dir() + "/data/checkpoints"});
  const auto id = cluster.submit(checkpointing_job("inside"));
  cluster.wait_job_state(id, "SUCCEEDED", 30s);
  const Json listed = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/checkpoints").body["checkpoints"];
  EXPECT_FALSE(listed.empty()) << "the job wrote no checkpoint";
  EXPECT_EQ(agent_log().find("event=attempt_launch_refused"), std::string::npos) << agent_log();
}

// The daemon names the root to agents as a plain absolute path, however its flag was spelled.
TEST_F(ContainedPaths, ADaemonCheckpointRootWithATrailingSlashStillReachesTheAgent) {
  start({}, {"--checkpoint-root", cluster.dir() + "/ckpt/"});
  const auto id = cluster.submit(checkpointing_job("slash"));
  cluster.wait_job_state(id, "SUCCEEDED", 30s);
  EXPECT_FALSE(fs::is_empty(cluster.checkpoint_dir(id, cluster.dir() + "/ckpt/")));
}

TEST_F(ContainedPaths, ACheckpointDirOutsideTheAgentsCheckpointRootIsRefused) {
  start({"--checkpoint-root", cluster.dir() + "/elsewhere"});
  const auto id = cluster.submit(checkpointing_job("outside"));
  cluster.wait_job_state(id, "FAILED", 30s);
  EXPECT_NE(attempts_of(id).find("launch refused: checkpoint_dir"), std::string::npos) << attempts_of(id);
  EXPECT_NE(agent_log().find("event=attempt_launch_refused"), std::string::npos) << agent_log();
}

TEST_F(ContainedPaths, ASymlinkPlantedAsTheAttemptDirIsNotWrittenThrough) {
  start({});
  const fs::path outside = cluster.dir() + "/outside";
  fs::create_directories(outside);
  // Where the first attempts' directories would go.
  for (int attempt = 1; attempt <= 5; ++attempt) {
    fs::create_directory_symlink(outside, cluster.attempt_dir("node-a", attempt));
  }
  const auto id = cluster.submit(
      Json{{"name", "planted"}, {"nodes", 1}, {"command", {{"argv", {"/bin/sh", "-c", "echo written"}}}}});
  cluster.wait_job_state(id, "FAILED", 30s);
  EXPECT_NE(attempts_of(id).find("launch refused: node files: attempt_id"), std::string::npos) << attempts_of(id);
  EXPECT_TRUE(fs::is_empty(outside)) << "the agent wrote through the planted symlink";
}

}  // namespace
}  // namespace trainyard::testing
