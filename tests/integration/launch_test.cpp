// Where and how a command job starts, end to end: its working directory (as the job's own account),
// a standard PATH, exact words for a program that cannot be started (failing at once, with no
// retry), and a lost node blamed over the rank that died of its loss.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class Launch : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster.start_daemon();
    cluster.start_agent("node-a");
    cluster.wait_for_nodes(1);
  }

  // A directory every account may enter and write, for the job's files.
  std::string open_dir(const std::string& name) {
    const std::string dir = cluster.shared_dir() + "/" + name;
    fs::create_directory(dir);
    fs::permissions(dir, fs::perms::all);
    return dir;
  }

  // Submits `spec` with three attempts allowed and waits for it to fail; returns its attempts.
  Json fails_once(Json spec) {
    spec["retry"] = {{"attempts", 3}};
    const auto id = cluster.submit(spec);
    const Json job = cluster.wait_job_state(id, "FAILED", 30s);
    EXPECT_EQ(job["attempts"], 1) << "a program that cannot start is not retried: " << job.dump(2);
    return attempts_of(cluster, id);
  }

  Cluster cluster;
};

TEST_F(Launch, EveryRankStartsInTheJobsWorkdirWithAStandardPath) {
  const std::string exp = open_dir("exp");
  Json spec = shell_job("where", "echo cwd=$(pwd); echo PATH=$PATH");
  spec["command"]["workdir"] = exp;
  const auto id = cluster.submit(spec);
  cluster.wait_job_state(id, "SUCCEEDED", 20s);
  const std::string log = cluster.api("GET", job_path(id) + "/logs").body["logs"][0]["text"];
  EXPECT_NE(log.find("cwd=" + exp + "\n"), std::string::npos) << log;
  // Never the agent's (this test's) PATH, whatever it holds.
  EXPECT_NE(log.find("PATH=/usr/local/bin:/usr/bin:/bin\n"), std::string::npos) << log;
}

TEST_F(Launch, ACommandNotOnThePathFailsAtOnceNamingItAndThePathSearched) {
  const Json attempts = fails_once(argv_job("typo", {"trainyard-no-such-command", "--lr", "3e-4"}));
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0]["failure_class"], "file_not_found") << attempts[0].dump(2);
  EXPECT_EQ(attempts[0]["exit_code"], 127);
  EXPECT_NE(attempts[0]["reason"].get<std::string>().find(
                "launch failed: command not found: trainyard-no-such-command (PATH searched: /usr/local/bin:/usr/bin:/bin)"),
            std::string::npos)
      << attempts[0].dump(2);
}

TEST_F(Launch, AScriptWithoutExecutePermissionSaysChmod) {
  const std::string exp = open_dir("scripts");
  {
    std::ofstream(exp + "/train.sh") << "#!/bin/sh\necho training\n";
  }
  fs::permissions(exp + "/train.sh", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                                         fs::perms::others_read);
  Json spec = argv_job("not-executable", {"./train.sh"});
  spec["command"]["workdir"] = exp;
  const Json attempts = fails_once(spec);
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0]["failure_class"], "user_error") << attempts[0].dump(2);
  const std::string reason = attempts[0]["reason"];
  EXPECT_NE(reason.find("launch failed: " + exp + "/train.sh is not executable (mode 0644"), std::string::npos) << reason;
  EXPECT_NE(reason.find("chmod +x"), std::string::npos) << reason;
}

TEST_F(Launch, AScriptWhoseInterpreterIsMissingNamesTheInterpreter) {
  const std::string exp = open_dir("interp");
  {
    std::ofstream(exp + "/eval.py") << "#!/usr/bin/python9.9\nprint('never')\n";
  }
  fs::permissions(exp + "/eval.py", fs::perms::all);
  Json spec = argv_job("no-interpreter", {exp + "/eval.py"});
  const Json attempts = fails_once(spec);
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0]["failure_class"], "file_not_found") << attempts[0].dump(2);
  EXPECT_NE(attempts[0]["reason"].get<std::string>().find("interpreter not found: " + exp +
                                                          "/eval.py names /usr/bin/python9.9 on its #! line"),
            std::string::npos)
      << attempts[0].dump(2);
}

TEST_F(Launch, AWorkdirTheJobsAccountCannotEnterFailsNamingItsModeAndTheAccount) {
  if (::geteuid() != 0) GTEST_SKIP() << "the agent must be root to run jobs as other accounts";
  const std::string closed = cluster.dir() + "/root-only";
  fs::create_directory(closed);
  fs::permissions(closed, fs::perms::owner_all, fs::perm_options::replace);
  Json spec = shell_job("closed-dir", "echo never");
  spec["command"]["workdir"] = closed;
  const Json attempts = fails_once(spec);
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0]["failure_class"], "user_error") << attempts[0].dump(2);
  const std::string reason = attempts[0]["reason"];
  EXPECT_NE(reason.find("launch failed: the working directory " + closed + " cannot be entered by account "),
            std::string::npos)
      << reason;
  EXPECT_NE(reason.find("Permission denied (mode 0700, owner uid 0"), std::string::npos) << reason;
}

// kill -9 of an agent during a 2-node command job: its rank dies with it, and the survivor, which
// watches its peer as a real job's collective would, exits 1 a moment later. The lost node, not the
// survivor's, is the reason, the job.retrying event's node, and in node.down's jobs.
TEST(LostNode, IsBlamedOverTheRankThatFailedBecauseOfIt) {
  Cluster cluster;
  cluster.start_daemon({"--disconnect-grace-ms", "500"});
  cluster.start_agent("node-a");
  cluster.start_agent("node-b");
  cluster.wait_for_nodes(2);
  const std::string pid_file = cluster.shared_dir() + "/rank1.pid";
  Json spec = shell_job("watches-peer",
                        "if [ $RANK = 1 ]; then echo $$ > " + pid_file + "; exec sleep 600; fi; "
                        "while [ ! -s " + pid_file + " ]; do sleep 0.05; done; "
                        "while kill -0 $(cat " + pid_file + ") 2>/dev/null; do sleep 0.05; done; "
                        "echo 'RuntimeError: Connection reset by peer'; exit 1",
                        2);
  spec["retry"] = {{"attempts", 2}};
  const auto id = cluster.submit(spec);
  ASSERT_TRUE(eventually([&] { return fs::exists(pid_file) && fs::file_size(pid_file) > 0; }, 30s)) << cluster.daemon_log();
  // Both ranks reported started: a kill before that would end the attempt as it starts.
  Json attempt;
  ASSERT_TRUE(eventually([&] {
    attempt = attempts_of(cluster, id)[0];
    return attempt["state"] == "RUNNING";
  }, 30s)) << attempt.dump(2);
  const std::string lost = attempt["nodes"][1];
  cluster.stop_agent(lost, SIGKILL);

  ASSERT_TRUE(eventually([&] {
    attempt = attempts_of(cluster, id)[0];
    return attempt["state"] != "STARTING" && attempt["state"] != "RUNNING";
  }, 30s)) << attempt.dump(2);
  EXPECT_EQ(attempt["failure_class"], "node_lost") << attempt.dump(2);
  EXPECT_NE(attempt["reason"].get<std::string>().find("node " + lost), std::string::npos) << attempt.dump(2);
  Json retrying;
  ASSERT_TRUE(eventually([&] {
    retrying = cluster.api("GET", "/v1/events?type=job.retrying&job=" + std::to_string(id)).body["events"];
    return !retrying.empty();
  }, 20s));
  EXPECT_EQ(retrying[0]["node"], lost) << retrying.dump(2);
  // The node timeout (1.5 s here) makes it DOWN; its event names the job it hit, and the node's
  // events show the job's.
  Json down;
  ASSERT_TRUE(eventually([&] {
    down = cluster.api("GET", "/v1/events?type=node.down&node=" + lost).body["events"];
    return !down.empty();
  }, 20s)) << cluster.daemon_log();
  EXPECT_EQ(down[0]["details"]["jobs"], Json::array({std::to_string(id)})) << down.dump(2);
  EXPECT_NE(down[0]["message"].get<std::string>().find("it was running job " + std::to_string(id) + " (watches-peer)"),
            std::string::npos)
      << down.dump(2);
  const Json on_node = cluster.api("GET", "/v1/events?job=" + std::to_string(id) + "&node=" + lost).body["events"];
  EXPECT_TRUE(std::any_of(on_node.begin(), on_node.end(), [](const Json& e) { return e["type"] == "job.retrying"; }))
      << on_node.dump(2);
}

}  // namespace
}  // namespace trainyard::testing
