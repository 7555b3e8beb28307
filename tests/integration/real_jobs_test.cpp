// Real PyTorch jobs (Debian's python3-torch, run by /usr/bin/python3): data-parallel training over
// gloo with several processes per node, launched by the agent as torchrun would, and resumed from
// its own checkpoint after a node is lost.
#include <signal.h>

#include <filesystem>
#include <gtest/gtest.h>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class RealJobs : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(std::system("/usr/bin/python3 -c 'import torch.distributed' 2> /dev/null"), 0)
        << "Debian's python3-torch is missing: deploy/install-deps.sh test installs it";
    // Where every job's account can read it, wherever this checkout is.
    script_ = cluster.shared_dir() + "/ddp_train.py";
    fs::copy_file(std::string(TRAINYARD_SOURCE_DIR) + "/tests/integration/scripts/ddp_train.py", script_);
    fs::permissions(script_, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  }

  Json ddp_job(const std::string& name, int nodes, int procs, const std::string& steps, const std::string& pause) {
    Json spec = argv_job(name, {"/usr/bin/python3", script_, steps, pause}, nodes);
    spec["command"]["procs_per_node"] = procs;
    return spec;
  }

  std::string log_of(std::int64_t id, const std::string& query) {
    const Json logs = cluster.api("GET", job_path(id) + "/logs?" + query).body["logs"];
    return logs.empty() ? "" : logs[0].value("text", "");
  }

  Cluster cluster;
  std::string script_;
};

TEST_F(RealJobs, DdpOverGlooRunsTwoNodesOfTwoProcessesEachWithItsOwnRank) {
  cluster.start_daemon();
  cluster.start_agent("node-a");
  cluster.start_agent("node-b");
  cluster.wait_for_nodes(2);
  const auto id = cluster.submit(ddp_job("ddp", 2, 2, "10", "0"));
  cluster.wait_job_state(id, "SUCCEEDED", 180s);
  const std::string node0 = log_of(id, "rank=0");
  const std::string node1 = log_of(id, "rank=1");
  // The all-reduce of every process's rank: 0 + 1 + 2 + 3.
  for (const char* line : {"rank 0/4 local 0 step 10", "rank 1/4 local 1 step 10", "rank 0 done: sum of ranks 6",
                           "rank 1 done: sum of ranks 6"}) {
    EXPECT_NE(node0.find(line), std::string::npos) << line << "\n" << node0;
  }
  for (const char* line : {"rank 2/4 local 0 step 10", "rank 3/4 local 1 step 10", "rank 3 done: sum of ranks 6"}) {
    EXPECT_NE(node1.find(line), std::string::npos) << line << "\n" << node1;
  }
}

// kill -9 of the agent of the job's second node: its two processes die with it, the first node's
// see their peers vanish and fail, and the job runs again on other nodes from the newest checkpoint
// its rank 0 wrote, with the lost node named as the reason.
TEST_F(RealJobs, DdpResumesFromItsCheckpointAfterAnAgentIsKilled) {
  cluster.start_daemon({"--disconnect-grace-ms", "500"});
  for (const char* name : {"node-a", "node-b", "node-c", "node-d"}) cluster.start_agent(name);
  cluster.wait_for_nodes(4);
  const auto id = cluster.submit(ddp_job("ddp-resume", 2, 2, "60", "0.2"));
  const std::string path = job_path(id);
  ASSERT_TRUE(eventually([&] { return !cluster.api("GET", path + "/checkpoints").body["checkpoints"].empty(); }, 120s))
      << cluster.daemon_log();
  const Json first = attempts_of(cluster, id)[0];
  const std::string lost = first["nodes"][1];
  cluster.stop_agent(lost, SIGKILL);

  const Json job = cluster.wait_job_state(id, "SUCCEEDED", 240s);
  EXPECT_EQ(job["attempts"], 1) << "the lost node used none of the job's attempts: " << job.dump(2);
  const Json attempts = attempts_of(cluster, id);
  ASSERT_EQ(attempts.size(), 2u) << attempts.dump(2);
  EXPECT_EQ(attempts[0]["failure_class"], "node_lost") << attempts[0].dump(2);
  EXPECT_NE(attempts[0]["reason"].get<std::string>().find("node " + lost), std::string::npos) << attempts[0].dump(2);
  for (const auto& node : attempts[1]["nodes"]) EXPECT_NE(node, lost);
  const std::string resumed_from = attempts[1].value("resumed_from", "");
  ASSERT_FALSE(resumed_from.empty()) << attempts[1].dump(2);
  const std::string step = fs::path(resumed_from).filename().string().substr(5);
  const std::string second = log_of(id, "attempt=2&rank=0");
  EXPECT_NE(second.find("rank 0 resumed from step " + std::to_string(std::stoll(step))), std::string::npos) << second;
  EXPECT_NE(second.find("rank 0 done: sum of ranks 6"), std::string::npos) << second;
}

}  // namespace
}  // namespace trainyard::testing
