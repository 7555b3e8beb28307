// A cgroup per attempt (docs/DESIGN.md "Job accounts"): a root agent runs each command attempt in a cgroup of its own
// (agent/attempt_cgroup.h), which holds a fork bomb to its pids limit and whose every process,
// `setsid` or not, dies with the attempt. These tests need the agent to be root, and cgroups the
// agent can make (v1 or v2), as here and in CI; elsewhere they are skipped, saying why.
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <sstream>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// The pids of live processes whose command line is exactly `argv`.
std::vector<pid_t> processes_running(const std::vector<std::string>& argv) {
  std::string wanted;
  for (const auto& arg : argv) wanted += arg + '\0';
  std::vector<pid_t> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (!std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::ifstream in(entry.path() / "cmdline");
    const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline == wanted) found.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return found;
}

// A field of /proc/PID/status ("VmRSS", "Uid", "PPid"): its first number (kB for sizes); -1 when
// the process or the field is gone.
std::int64_t status_field(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
  }
  return -1;
}

const std::vector<std::string> kSimulatedRank = {"/proc/self/exe", "--simulated-rank"};

Json simulated_job(const Json& workload, const Json& extra = Json::object()) {
  Json spec = {{"name", "kernel"}, {"nodes", 1}, {"kind", "simulated"}, {"workload", workload}};
  spec.update(extra);
  return spec;
}

class AttemptCgroups : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the agent must be root to make cgroups";
    cluster.start_daemon();
  }

  // Starts node-a; returns its start-up line saying how it contains attempts (event=cgroups).
  std::string start_agent(const std::vector<std::string>& flags) {
    cluster.start_agent("node-a", AgentSpec{4, flags, ""});
    cluster.wait_for_nodes(1);
    const std::string log = read_text(cluster.dir() + "/agent-node-a.log");
    const auto at = log.find("event=cgroups ");
    return at == std::string::npos ? "" : log.substr(at, log.find('\n', at) - at);
  }

  bool cgroups_available(const std::string& line) { return line.find("cgroups=v") != std::string::npos; }

  // Runs `script` to its end in `state`; returns its log.
  std::string run(const std::string& script, const std::string& state, const Json& extra = Json::object()) {
    Json spec = {{"name", "contained"},
                 {"nodes", 1},
                 {"cores_per_node", 1},
                 {"command", {{"argv", {"/bin/sh", "-c", script}}}}};
    spec.update(extra);
    const auto id = cluster.submit(spec);
    last_job = cluster.wait_job_state(id, state, 30s);
    const auto logs = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/logs");
    return logs.status == 200 && !logs.body["logs"].empty() ? logs.body["logs"][0]["text"].get<std::string>() : "";
  }

  Cluster cluster;
  Json last_job;
};

TEST_F(AttemptCgroups, AForkBombIsHeldByThePidsLimit) {
  const std::string cgroups = start_agent({"--job-pids-max", "24"});
  if (!cgroups_available(cgroups)) GTEST_SKIP() << "cgroups unavailable here: " << cgroups;
  // Forks sleepers until the kernel refuses (the shell then stops with "Cannot fork"), or 200.
  const std::string log = run("n=0; while [ $n -lt 200 ]; do sleep 613 & n=$((n+1)); echo $n; done; echo unbounded",
                              "FAILED");
  EXPECT_EQ(log.find("unbounded"), std::string::npos) << log;
  std::istringstream lines(log);
  int started = 0;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && std::all_of(line.begin(), line.end(), ::isdigit)) started = std::stoi(line);
  }
  EXPECT_GT(started, 0) << log;
  EXPECT_LT(started, 24) << "the shell and its sleepers are at most 24 processes";
  EXPECT_TRUE(eventually([] { return processes_running({"sleep", "613"}).empty(); }, 10s))
      << "the sleepers outlived their attempt";
  for (const pid_t pid : processes_running({"sleep", "613"})) ::kill(pid, SIGKILL);
}

TEST_F(AttemptCgroups, AProcessThatLeftTheSessionDiesWithItsAttempt) {
  const std::string cgroups = start_agent({});
  if (!cgroups_available(cgroups)) GTEST_SKIP() << "cgroups unavailable here: " << cgroups;
  // The leader waits until the escapee runs in a session of its own, so a process-group kill
  // cannot reach it, and ends the attempt.
  const std::string escaped = cluster.shared_dir() + "/escaped";
  run("setsid sh -c 'echo $$ > " + escaped + ".tmp && mv " + escaped + ".tmp " + escaped +
          "; exec sleep 611' & while [ ! -s " + escaped + " ]; do sleep 0.01; done; echo escaped",
      "SUCCEEDED");
  const pid_t pid = static_cast<pid_t>(std::stol(read_text(escaped)));
  const bool gone = eventually([&] { return ::kill(pid, 0) != 0 || processes_running({"sleep", "611"}).empty(); }, 10s);
  EXPECT_TRUE(gone) << "the setsid escapee " << pid << " outlived its attempt";
  for (const pid_t leftover : processes_running({"sleep", "611"})) ::kill(leftover, SIGKILL);
}

TEST_F(AttemptCgroups, AMemoryHogPastTheJobsMemoryLimitIsKilledAsOutOfMemory) {
  const std::string cgroups = start_agent({});
  if (!cgroups_available(cgroups)) GTEST_SKIP() << "cgroups unavailable here: " << cgroups;
  // dd touches its whole 256 MiB buffer on the first read; the job may use 64 MiB.
  const std::string log = run("echo hogging; exec dd if=/dev/zero of=/dev/null bs=256M count=1", "FAILED",
                              {{"memory_mb", 64}});
  EXPECT_NE(log.find("hogging"), std::string::npos) << log;
  const Json attempt = cluster.api("GET", "/v1/jobs/" + std::to_string(last_job["id"].get<std::int64_t>()) + "/attempts")
                           .body["attempts"][0];
  EXPECT_EQ(attempt["failure_class"], "oom") << attempt.dump(2);
  EXPECT_NE(attempt.dump().find("out of memory: the kernel's OOM killer killed"), std::string::npos) << attempt.dump(2);
  EXPECT_NE(attempt.dump().find("at the job's memory_mb of 64 MiB"), std::string::npos) << attempt.dump(2);
  // The node says how it contains attempts.
  EXPECT_EQ(cluster.api("GET", "/v1/nodes/node-a").body["cgroups"].get<std::string>().rfind("v", 0), 0u);
}

TEST_F(AttemptCgroups, AJobAskingMoreMemoryThanAnyNodeHasIsRefusedAtSubmit) {
  cluster.start_agent("node-a", AgentSpec{4, {"--memory-mb", "1024"}, ""});
  cluster.wait_for_nodes(1);
  const auto answer = cluster.api("POST", "/v1/jobs",
                                  Json{{"name", "big"}, {"nodes", 1}, {"memory_mb", 4096},
                                       {"command", {{"argv", {"/bin/true"}}}}}.dump());
  EXPECT_EQ(answer.status, 400) << answer.body.dump();
  EXPECT_NE(answer.body.dump().find("memory_mb"), std::string::npos) << answer.body.dump();
}

TEST_F(AttemptCgroups, ANodeOffersItsHostsMemoryUnlessToldOtherwise) {
  cluster.start_agent("node-a", AgentSpec{2, {}, ""});
  cluster.wait_for_nodes(1);
  const std::int64_t host_mb =
      static_cast<std::int64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGE_SIZE) / (1024 * 1024);
  EXPECT_EQ(cluster.api("GET", "/v1/nodes/node-a").body["memory_mb"], host_mb);
  // So a job asking more than the host has is refused, with no flag set anywhere.
  const auto answer = cluster.api("POST", "/v1/jobs",
                                  Json{{"name", "big"}, {"nodes", 1}, {"memory_mb", host_mb + 1},
                                       {"command", {{"argv", {"/bin/true"}}}}}.dump());
  EXPECT_EQ(answer.status, 400) << answer.body.dump();
}

// A simulated rank trains in a process of its own (agent/simulated_run.h), not in the agent: a
// large spec's memory is the rank's, under the job's account, and a cancel's SIGTERM ends it
// mid-step. A kill grace far longer than the wait tells the two apart on a loaded machine too: a
// rank deaf to SIGTERM would live until the grace's SIGKILL.
TEST_F(AttemptCgroups, ASimulatedRankTrainsInAProcessOfItsOwnAndStopsOnTheCancelsSigterm) {
  cluster.kill_daemon(SIGTERM);
  cluster.start_daemon({"--kill-grace-ms", "20000"});
  start_agent({});
  // About 270 MiB of state, and a step of several seconds on these machines.
  const auto id = cluster.submit(
      simulated_job({{"width", 2048}, {"depth", 4}, {"global_batch", 2048}, {"steps", 100}}));
  cluster.wait_job_state(id, "RUNNING", 30s);
  pid_t rank = -1;
  ASSERT_TRUE(eventually(
      [&] {
        const auto found = processes_running(kSimulatedRank);
        if (found.size() == 1) rank = found.front();
        return rank > 0 && status_field(rank, "VmRSS") > 200 * 1024;
      },
      60s))
      << "no rank process holding the spec's memory";
  const pid_t agent = cluster.agent("node-a").pid();
  EXPECT_EQ(status_field(rank, "PPid"), agent);
  EXPECT_NE(status_field(rank, "Uid"), 0) << "the rank runs as the job's account, not as the root agent";
  EXPECT_LT(status_field(agent, "VmHWM"), 100 * 1024) << "the agent itself never held the spec's memory";

  const auto cancel_at = std::chrono::steady_clock::now();
  ASSERT_EQ(cluster.api("POST", "/v1/jobs/" + std::to_string(id) + "/cancel").status, 200);
  ASSERT_TRUE(eventually([&] { return ::kill(rank, 0) != 0; }, 15s))
      << "the rank outlived its cancel's SIGTERM: only the kill grace's SIGKILL (20 s) would end it";
  std::cout << "simulated rank gone " << std::chrono::duration_cast<std::chrono::milliseconds>(
                                             std::chrono::steady_clock::now() - cancel_at).count()
            << " ms after the cancel\n";
  cluster.wait_job_state(id, "CANCELLED", 10s);
  EXPECT_TRUE(cluster.agent("node-a").running());
  const std::string log = read_text(cluster.dir() + "/agent-node-a.log");
  EXPECT_NE(log.find("argv0=/proc/self/exe"), std::string::npos) << log;
}

TEST_F(AttemptCgroups, ASimulatedRankPastTheJobsMemoryLimitIsKilledAsOutOfMemory) {
  const std::string cgroups = start_agent({});
  if (!cgroups_available(cgroups)) GTEST_SKIP() << "cgroups unavailable here: " << cgroups;
  const auto id = cluster.submit(simulated_job({{"width", 2048}, {"depth", 4}, {"global_batch", 256}, {"steps", 5}},
                                               {{"memory_mb", 96}}));
  cluster.wait_job_state(id, "FAILED", 60s);
  const Json attempt = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts").body["attempts"][0];
  EXPECT_EQ(attempt["failure_class"], "oom") << attempt.dump(2);
  EXPECT_NE(attempt.dump().find("at the job's memory_mb of 96 MiB"), std::string::npos) << attempt.dump(2);
  EXPECT_TRUE(cluster.agent("node-a").running());
}

TEST_F(AttemptCgroups, ASimulatedSpecNoNodeCanHoldIsRefusedNamingItsWorkload) {
  cluster.start_agent("node-a", AgentSpec{4, {"--memory-mb", "512"}, ""});
  cluster.wait_for_nodes(1);
  const auto refused =
      cluster.api("POST", "/v1/jobs", simulated_job({{"width", 4096}, {"depth", 16}, {"global_batch", 4096}}).dump());
  EXPECT_EQ(refused.status, 400) << refused.body.dump();
  EXPECT_NE(refused.body.dump().find("workload"), std::string::npos) << refused.body.dump();
  EXPECT_NE(refused.body.dump().find("the simulated spec needs"), std::string::npos) << refused.body.dump();
  const auto small = cluster.api("POST", "/v1/jobs", simulated_job({{"steps", 5}}).dump());
  EXPECT_EQ(small.status, 201) << small.body.dump();
}

}  // namespace
}  // namespace trainyard::testing
