// Real PyTorch jobs (Debian's python3-torch, run by /usr/bin/python3): data-parallel training over
// gloo with several processes per node, launched by the agent as torchrun would, and resumed from
// its own checkpoint after a node is lost.
#include <signal.h>

#include <filesystem>
#include <gtest/gtest.h>

#include "proto/time.h"
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

  Json ddp_job(const std::string& name, int nodes, int procs, const std::string& steps, const std::string& pause,
               const std::string& hang = "") {
    std::vector<std::string> argv = {"/usr/bin/python3", script_, steps, pause};
    if (!hang.empty()) argv.push_back(hang);
    Json spec = argv_job(name, argv, nodes);
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

// Jobs that report through the `trainyard` module the agent puts on their PYTHONPATH
// (tests/integration/scripts/report_train.py: independent workers, no torch).
class ModuleReports : public RealJobs {
 protected:
  void SetUp() override {
    RealJobs::SetUp();
    reporter_ = cluster.shared_dir() + "/report_train.py";
    fs::copy_file(std::string(TRAINYARD_SOURCE_DIR) + "/tests/integration/scripts/report_train.py", reporter_);
    fs::permissions(reporter_, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  }
  Json reporting_job(const std::string& name, int nodes, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/python3", reporter_};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv_job(name, argv, nodes);
  }
  std::string reporter_;
};

TEST_F(ModuleReports, MetricsPhasesAndAnnouncedCheckpointsReachTheDaemon) {
  cluster.start_daemon();
  cluster.start_agent("node-a");
  cluster.wait_for_nodes(1);
  const auto id = cluster.submit(reporting_job("reporting", 1, {"20", "0.05", "5"}));
  cluster.wait_job_state(id, "SUCCEEDED", 60s);
  const std::string path = job_path(id);
  const Json metrics = cluster.api("GET", path + "/metrics").body;
  ASSERT_EQ(metrics["steps"], 20) << metrics.dump();
  ASSERT_EQ(metrics["points"].size(), 20u) << metrics.dump();
  EXPECT_EQ(metrics["points"][19]["step"], 20);
  EXPECT_DOUBLE_EQ(metrics["points"][3]["loss"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(metrics["points"][3]["lr"].get<double>(), 0.01);
  EXPECT_DOUBLE_EQ(metrics["points"][3]["samples_per_s"].get<double>(), 100.0) << "RANK 0's";
  // Announced checkpoints only are resume points: the step directory it left unannounced is listed
  // as not recorded.
  const Json checkpoints = cluster.api("GET", path + "/checkpoints").body["checkpoints"];
  std::int64_t newest_valid = 0;
  for (const auto& c : checkpoints) {
    const std::int64_t step = c["step"];
    EXPECT_EQ(c["valid"].get<bool>(), step <= 20) << checkpoints.dump(2);
    if (c["valid"].get<bool>()) newest_valid = std::max(newest_valid, step);
  }
  EXPECT_EQ(newest_valid, 20) << checkpoints.dump(2);
  EXPECT_EQ(checkpoints.back()["step"], 120) << checkpoints.dump(2);
  // Four checkpoint phases of 0.1 s each: goodput's checkpoint time.
  const Json attempt = attempts_of(cluster, id)[0];
  EXPECT_GE(attempt.value("checkpoint_ms", 0), 400) << attempt.dump(2);
  EXPECT_EQ(attempt["steps_completed"], 20) << attempt.dump(2);
  const Json ended = cluster.api("GET", "/v1/events?type=job.succeeded&job=" + std::to_string(id)).body["events"];
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_NE(ended[0]["message"].get<std::string>().find("succeeded after 20 steps"), std::string::npos) << ended.dump(2);
}

TEST_F(ModuleReports, AStragglerIsNamedFromTheStepsItReports) {
  cluster.start_daemon();
  cluster.start_agent("node-a");
  cluster.start_agent("node-b");
  cluster.wait_for_nodes(2);
  const auto id = cluster.submit(reporting_job("straggling", 2, {"400", "0.05", "0", "1", "3"}));
  Json events;
  ASSERT_TRUE(eventually([&] {
    events = cluster.api("GET", "/v1/events?type=job.straggler&job=" + std::to_string(id)).body["events"];
    return !events.empty();
  }, 90s)) << attempts_of(cluster, id).dump(2);
  const Json attempt = attempts_of(cluster, id)[0];
  EXPECT_EQ(events[0]["details"]["rank"], 1) << events.dump(2);
  EXPECT_EQ(events[0]["node"], attempt["nodes"][1]) << events.dump(2);
  // 3 x 50 ms against 50 ms of sleep, plus what a step costs around it.
  EXPECT_GE(events[0]["details"]["ratio"].get<double>(), 2.0) << events.dump(2);
  cluster.api("POST", job_path(id) + "/cancel");
}

// No progress file, default settings: RANK 1 hangs after step 12 and RANK 0 waits for it in its
// next all-reduce. Found from the ranks' idleness alone (no output, CPU or I/O) within 60 s of the
// hung rank's last line; the diagnosis names the rank that hangs, not the one that waits, and says
// where each process was (its Python stack, or that it is stopped), on the attempt and in the
// job.stuck event that webhooks carry.
class RealJobHangs : public RealJobs {
 protected:
  std::string diagnose(const std::string& hang) {
    cluster.start_daemon();
    cluster.start_agent("node-a");
    cluster.start_agent("node-b");
    cluster.wait_for_nodes(2);
    const auto id = cluster.submit(ddp_job("hang", 2, 1, "100000", "0.2", hang));
    Json attempt;
    EXPECT_TRUE(eventually([&] {
      attempt = attempts_of(cluster, id)[0];
      return attempt.contains("stuck_detected_at");
    }, 120s)) << attempt.dump(2) << cluster.daemon_log();
    if (!attempt.contains("stuck_detected_at")) return "";
    nodes_ = {attempt["nodes"][0], attempt["nodes"][1]};
    const std::string log = log_of(id, "attempt=1&rank=1");
    const std::string marker = "last_line_at_ms=";
    const auto at = log.find(marker);
    EXPECT_NE(at, std::string::npos) << log;
    if (at == std::string::npos) return "";
    const std::int64_t last_line_ms = std::stoll(log.substr(at + marker.size()));
    const auto found_after_ms = to_unix_ms(*parse_time(attempt["stuck_detected_at"].get<std::string>())) - last_line_ms;
    // Idle for the learned allowance, max(5 x the output's p99 interval, 30 s), counted from the
    // last look that found it active, which is no sooner than its last line.
    EXPECT_GE(found_after_ms, 30'000) << attempt.dump(2);
    EXPECT_LE(found_after_ms, 60'000) << attempt.dump(2);
    const Json stuck = cluster.api("GET", "/v1/events?type=job.stuck&job=" + std::to_string(id)).body["events"];
    EXPECT_EQ(stuck.size(), 1u) << stuck.dump(2);
    const std::string diagnosis = attempt.value("diagnosis", "");
    if (stuck.empty()) return diagnosis;
    // The event says what the attempt says; the attempt may add the hung nodes' health verdict later.
    const std::string said = stuck[0]["details"].value("diagnosis", "");
    EXPECT_TRUE(diagnosis.starts_with(said)) << diagnosis << "\n" << stuck.dump(2);
    EXPECT_NE(stuck[0]["message"].get<std::string>().find(said), std::string::npos) << stuck.dump(2);
    return said;
  }
  std::vector<std::string> nodes_;
};

TEST_F(RealJobHangs, ARankAsleepInItsOwnCodeIsNamedWithItsStack) {
  const std::string diagnosis = diagnose("sleep:12");
  ASSERT_EQ(nodes_.size(), 2u);
  EXPECT_NE(diagnosis.find("no output, CPU or I/O for 30s: rank 1 (" + nodes_[1] + ") hung"), std::string::npos) << diagnosis;
  EXPECT_NE(diagnosis.find("rank 0 (" + nodes_[0] + ") waiting on them"), std::string::npos) << diagnosis;
  EXPECT_NE(diagnosis.find(nodes_[1] + " RANK 1 pid "), std::string::npos) << diagnosis;
  EXPECT_NE(diagnosis.find("ddp_train.py:"), std::string::npos) << diagnosis;
  EXPECT_NE(diagnosis.find(" in hang_here"), std::string::npos) << "the hung rank's own frame: " << diagnosis;
  // The waiting rank is inside the all-reduce of its backward pass, reached from the script's loop.
  const auto waiting = diagnosis.find(nodes_[0] + " RANK 0 pid ");
  ASSERT_NE(waiting, std::string::npos) << diagnosis;
  EXPECT_NE(diagnosis.find("ddp_train.py:", waiting), std::string::npos) << diagnosis;
}

TEST_F(RealJobHangs, AStoppedRankIsNamedAsStopped) {
  const std::string diagnosis = diagnose("stop:12");
  ASSERT_EQ(nodes_.size(), 2u);
  EXPECT_NE(diagnosis.find("rank 1 (" + nodes_[1] + ") stopped"), std::string::npos) << diagnosis;
  EXPECT_NE(diagnosis.find("rank 0 (" + nodes_[0] + ") waiting on them"), std::string::npos) << diagnosis;
  EXPECT_NE(diagnosis.find("stopped (state T)"), std::string::npos) << diagnosis;
}

}  // namespace
}  // namespace trainyard::testing
