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

}  // namespace
}  // namespace trainyard::testing
