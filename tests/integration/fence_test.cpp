// Fencing (agent/agent.h, daemon/policy/fence_timing.h): a node cut off from the daemon stops its attempts
// itself before the daemon could replace them, so no attempt runs twice. The daemon is frozen
// (SIGSTOP) here: its agent's heartbeats then go unacknowledged on a link that stays open, as in a
// partition that drops packets without closing connections.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <unistd.h>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// 100 ms heartbeats, a 3 s node timeout, a 0.5 s kill grace and a 1 s fence: 1 + 0.5 + 0.3 <= 3.
void start_fenced_cluster(Cluster& cluster) {
  cluster.start_daemon({"--node-timeout-ms", "3000", "--kill-grace-ms", "500", "--fence-ms", "1000"});
  cluster.start_agent("node-a");
  cluster.wait_for_nodes(1);
}

struct FirstAttempt {
  std::int64_t job_id = 0;
  pid_t pid = -1;
};

// A job whose first attempt records its pid and runs until stopped, and whose retry ends at once;
// returns once the first runs.
FirstAttempt start_first_attempt(Cluster& cluster) {
  const std::string shared = cluster.shared_dir();
  const std::string script = "if [ -e " + shared + "/first.pid ]; then echo second attempt; exit 0; fi; "
                             "echo $$ > " + shared + "/first.tmp && mv " + shared + "/first.tmp " + shared +
                             "/first.pid; exec sleep 600";
  FirstAttempt first;
  first.job_id = cluster.submit({{"name", "fenced"}, {"nodes", 1}, {"command", {{"argv", {"/bin/sh", "-c", script}}}}});
  EXPECT_TRUE(eventually([&] { return fs::exists(shared + "/first.pid"); }, 30s)) << cluster.daemon_log();
  if (fs::exists(shared + "/first.pid")) first.pid = static_cast<pid_t>(std::stol(read_text(shared + "/first.pid")));
  return first;
}

TEST(Fencing, AnAgentWhoseHeartbeatsGoUnacknowledgedStopsItsAttemptBeforeTheNodeTimeout) {
  Cluster cluster;
  start_fenced_cluster(cluster);
  const FirstAttempt first = start_first_attempt(cluster);
  const std::int64_t id = first.job_id;
  const pid_t pid = first.pid;
  ASSERT_GT(pid, 0);

  cluster.daemon().signal(SIGSTOP);
  const auto frozen_at = std::chrono::steady_clock::now();
  // The daemon gives up on a node 3 s after the last heartbeat it heard: the attempt is gone sooner.
  const bool stopped = eventually([&] { return ::kill(pid, 0) != 0; }, 2900ms);
  const auto stopped_after = std::chrono::steady_clock::now() - frozen_at;
  cluster.daemon().signal(SIGCONT);
  ASSERT_TRUE(stopped) << "the attempt outlived the node timeout:\n" << read_text(cluster.dir() + "/agent-node-a.log");
  // Stopped by the fence (1 s after the last acknowledged heartbeat was sent, at most 100 ms before
  // the freeze), not by anything sooner.
  EXPECT_GE(stopped_after, 850ms);
  EXPECT_NE(read_text(cluster.dir() + "/agent-node-a.log").find("event=fenced node=node-a attempts=1"),
            std::string::npos);

  // Awake, the daemon hears why the attempt ended: the node's fault, not the job's, so it is retried
  // without using the job's one attempt.
  const Json job = cluster.wait_job_state(id, "SUCCEEDED", 30s);
  const Json attempts = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts").body["attempts"];
  ASSERT_EQ(attempts.size(), 2u) << attempts.dump(2);
  EXPECT_EQ(attempts[0]["failure_class"], "node_lost") << attempts.dump(2);
  EXPECT_TRUE(attempts[0]["infrastructure"].get<bool>()) << attempts.dump(2);
  EXPECT_NE(attempts[0].value("reason", "").find("fenced: the daemon acknowledged no heartbeat"), std::string::npos)
      << attempts.dump(2);
}

std::string trim_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// Whether `pid` has ended: gone, or a zombie its parent has not reaped.
bool exited_or_zombie(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return true;
  const auto state = stat.find(") ");
  return state != std::string::npos && stat[state + 2] == 'Z';
}

// An agent that is frozen cannot fence: its fence keeper (agent/fence_keeper.h), a process of its
// own, stops the attempt when the deadline the agent last gave it passes, so the daemon's
// replacement elsewhere never runs beside it.
TEST(Fencing, AFrozenAgentsAttemptIsStoppedByItsFenceKeeperBeforeTheNodeTimeout) {
  Cluster cluster;
  start_fenced_cluster(cluster);
  const FirstAttempt first = start_first_attempt(cluster);
  const std::int64_t id = first.job_id;
  const pid_t pid = first.pid;
  ASSERT_GT(pid, 0);
  cluster.start_agent("node-b");  // where the retry runs
  cluster.wait_for_nodes(2);

  cluster.agent("node-a").signal(SIGSTOP);
  const auto frozen_at = std::chrono::steady_clock::now();
  // Its parent, the frozen agent, cannot reap it: ended is a zombie.
  const bool stopped = eventually([&] { return exited_or_zombie(pid); }, 2900ms);
  const auto stopped_after = std::chrono::steady_clock::now() - frozen_at;
  ASSERT_TRUE(stopped) << "the frozen agent's attempt outlived the node timeout:\n"
                       << read_text(cluster.dir() + "/agent-node-a.log");
  EXPECT_GE(stopped_after, 850ms) << "stopped at the fence, not sooner";
  std::cout << "frozen agent's attempt stopped "
            << std::chrono::duration_cast<std::chrono::milliseconds>(stopped_after).count() << " ms after the freeze\n";
  // After the grace: the zombie still counts as the group's member.
  EXPECT_TRUE(eventually(
      [&] {
        return read_text(cluster.dir() + "/agent-node-a.log").find("event=fence_keeper_fenced node=node-a process_groups=1") !=
               std::string::npos;
      },
      5s))
      << read_text(cluster.dir() + "/agent-node-a.log");

  // The daemon replaced the frozen node's attempt on node-b.
  cluster.wait_job_state(id, "SUCCEEDED", 30s);
  const Json attempts = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts").body["attempts"];
  ASSERT_EQ(attempts.size(), 2u) << attempts.dump(2);
  EXPECT_TRUE(attempts[0]["infrastructure"].get<bool>()) << attempts.dump(2);
  // Thawed, the agent finds its attempt gone and carries on.
  cluster.agent("node-a").signal(SIGCONT);
  cluster.wait_for_nodes(2);
}

// A dead agent's attempt leaders die with it (PR_SET_PDEATHSIG), but a process that left their
// session lives on in the attempt's cgroup: the keeper kills it as soon as the agent is gone.
TEST(Fencing, WhatADeadAgentsAttemptLeftRunningIsKilledByItsFenceKeeper) {
  if (::geteuid() != 0) GTEST_SKIP() << "the agent must be root to make cgroups";
  Cluster cluster;
  start_fenced_cluster(cluster);
  if (read_text(cluster.dir() + "/agent-node-a.log").find("cgroups=v") == std::string::npos) {
    GTEST_SKIP() << "cgroups unavailable here";
  }
  const std::string escaped = cluster.shared_dir() + "/escaped";
  const std::string script = "setsid sh -c 'echo $$ > " + escaped + ".tmp && mv " + escaped + ".tmp " + escaped +
                             "; exec sleep 617' & exec sleep 600";
  cluster.submit({{"name", "escapes"}, {"nodes", 1}, {"command", {{"argv", {"/bin/sh", "-c", script}}}}});
  ASSERT_TRUE(eventually([&] { return fs::exists(escaped); }, 30s)) << cluster.daemon_log();
  const pid_t pid = static_cast<pid_t>(std::stol(read_text(escaped)));

  cluster.stop_agent("node-a", SIGKILL);
  // Orphaned, it is reaped by whoever reaps orphans here (in a container, maybe nobody): ended.
  const bool killed = eventually([&] { return exited_or_zombie(pid); }, 2s);
  if (!killed) ::kill(pid, SIGKILL);
  ASSERT_TRUE(killed) << "the escapee outlived its dead agent:\n" << read_text(cluster.dir() + "/agent-node-a.log");
}


// Without a fence (the default test cluster's `--fence-ms 0`), a frozen agent's rank keeps running
// after the daemon replaced its attempt, and keeps writing `step-N` directories into the job's
// checkpoints, newer than any its successors write. None of them is a resume point: a command's
// step directory counts only when the agent of a current attempt reported it
// (agent/command_checkpoints.h, daemon/job_checkpoints.h).
TEST(Fencing, StepDirectoriesAReplacedAttemptKeepsWritingAreNeverResumedFrom) {
  Cluster cluster;
  cluster.start_daemon();
  cluster.start_agent("node-a");
  cluster.wait_for_nodes(1);
  const std::string shared = cluster.shared_dir();
  const auto note = [&](const std::string& name, const std::string& value) {
    return "echo \"" + value + "\" > " + shared + "/" + name + ".tmp && mv " + shared + "/" + name + ".tmp " + shared +
           "/" + name;
  };
  const std::string script =
      "case \"$TRAINYARD_ATTEMPT\" in "
      "1) " + note("checkpoints", "$TRAINYARD_CHECKPOINT_DIR") + "; n=1; while :; do "
      "mkdir -p \"$TRAINYARD_CHECKPOINT_DIR/step-$(printf %010d $n)\"; echo \"$n train\" > \"$TRAINYARD_PROGRESS_FILE\"; "
      "n=$((n+1)); sleep 0.1; done ;; "
      "2) " + note("resume-2", "$TRAINYARD_RESUME_FROM") + "; while [ ! -e " + shared + "/go ]; do sleep 0.05; done; exit 1 ;; "
      "*) " + note("resume-3", "$TRAINYARD_RESUME_FROM") + "; exit 0 ;; esac";
  const auto id = cluster.submit({{"name", "stale-writer"},
                                  {"nodes", 1},
                                  {"retry", {{"attempts", 5}}},
                                  {"command", {{"argv", {"/bin/sh", "-c", script}}}}});
  const std::string listing = "/v1/jobs/" + std::to_string(id) + "/checkpoints";
  const auto valid_steps = [&] {
    std::vector<std::int64_t> steps;
    const Json listed = cluster.api("GET", listing).body["checkpoints"];
    for (const Json& c : listed) {
      if (c.value("valid", false)) steps.push_back(c["step"].get<std::int64_t>());
    }
    return steps;
  };
  ASSERT_TRUE(eventually([&] { return valid_steps().size() >= 3; }, 30s))
      << cluster.api("GET", listing).body.dump(2) << cluster.daemon_log();
  const fs::path checkpoints = trim_line(read_text(shared + "/checkpoints"));
  const auto newest_on_disk = [&] {
    std::int64_t newest = 0;
    for (const auto& entry : fs::directory_iterator(checkpoints)) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("step-")) newest = std::max<std::int64_t>(newest, std::stoll(name.substr(5)));
    }
    return newest;
  };

  cluster.start_agent("node-b");
  cluster.wait_for_nodes(2);
  cluster.agent("node-a").signal(SIGSTOP);  // its rank runs on, unfenced
  ASSERT_TRUE(eventually([&] { return fs::exists(shared + "/resume-2"); }, 30s)) << cluster.daemon_log();
  const std::string resumed_second = trim_line(read_text(shared + "/resume-2"));
  const std::int64_t newest_when_replaced = newest_on_disk();
  ASSERT_TRUE(eventually([&] { return newest_on_disk() >= newest_when_replaced + 5; }, 10s))
      << "the replaced attempt stopped writing";

  std::ofstream(shared + "/go").close();
  cluster.wait_job_state(id, "SUCCEEDED", 30s);
  const std::string resumed_third = trim_line(read_text(shared + "/resume-3"));
  EXPECT_EQ(resumed_third, resumed_second) << "resumed from a step directory the replaced attempt wrote; it had reached step "
                                           << newest_on_disk();
  const Json listed = cluster.api("GET", listing).body["checkpoints"];
  ASSERT_FALSE(listed.empty());
  EXPECT_EQ(listed.back().value("problem", ""),
            "not recorded: no attempt of this job reported writing it while it was current")
      << listed.dump(2);
  cluster.agent("node-a").signal(SIGCONT);  // thawed, it is told to stop what it still runs
  EXPECT_TRUE(eventually(
      [&] { return cluster.daemon_log().find("event=attempt_fenced attempt=") != std::string::npos; }, 20s))
      << cluster.daemon_log();
}

}  // namespace
}  // namespace trainyard::testing
