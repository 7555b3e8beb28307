// Jobs never run as root: a root agent runs command jobs as an unprivileged account,
// per submitting user with --user-map, and a job reaches neither another user's job directories
// nor the agent's credentials. These tests need the agent to be root (as here and in CI).
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string uid_of(const std::string& account) { return std::to_string(::getpwnam(account.c_str())->pw_uid); }

class JobAccounts : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "the agent must be root to run jobs as other accounts";
    cluster.start_daemon();
  }

  void start_agent(const std::vector<std::string>& flags) {
    cluster.start_agent("node-a", AgentSpec{4, flags, ""});
    cluster.wait_for_nodes(1);
  }

  // Runs `script` as the token's user to completion; returns its log lines.
  std::vector<std::string> run(const std::string& script, const std::string& token = "") {
    const Json spec = {{"name", "who"}, {"nodes", 1}, {"command", {{"argv", {"/bin/sh", "-c", script}}}}};
    const auto id = cluster.submit(spec, token);
    const Json job = cluster.wait_job_state(id, "SUCCEEDED", 30s);
    EXPECT_EQ(job["exit_code"], 0) << job.dump(2);
    const auto logs = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/logs");
    std::vector<std::string> lines;
    if (logs.status != 200 || logs.body["logs"].empty()) return lines;
    std::istringstream text(logs.body["logs"][0]["text"].get<std::string>());
    for (std::string line; std::getline(text, line);) lines.push_back(line);
    return lines;
  }

  std::string token_of(const std::string& user) {
    return cluster.api("POST", "/v1/tokens", Json{{"user", user}}.dump()).body["token"];
  }

  Cluster cluster;
};

// Prints "refused" when the file `path` cannot be read nor the directory `path` listed, "LEAKED"
// when it can.
std::string try_to_read(const std::string& path) {
  return "if cat " + path + " >/dev/null 2>&1 || ls -A " + path + "/ >/dev/null 2>&1; then echo LEAKED " + path +
         "; else echo refused; fi";
}

TEST_F(JobAccounts, ARootAgentRunsCommandJobsAsNobodyWhoCannotReadTheAgentsSecrets) {
  start_agent({});
  const std::string credential = cluster.dir() + "/agents/node-a/node.credential";
  ASSERT_TRUE(eventually([&] { return fs::exists(credential); }, 10s));
  const auto lines = run("id -u; " + try_to_read(credential) + "; " + try_to_read(cluster.dir() + "/data/join.token") +
                         "; " + try_to_read(cluster.dir() + "/data/admin.token") + "; " +
                         try_to_read(cluster.dir() + "/data/trainyard.db") +
                         "; echo 3 > \"$TRAINYARD_PROGRESS_FILE\" && echo ok > \"$TRAINYARD_CHECKPOINT_DIR/mine\" && "
                         "echo wrote");
  ASSERT_EQ(lines.size(), 6u) << ::testing::PrintToString(lines);
  EXPECT_EQ(lines[0], uid_of("nobody"));
  for (int i = 1; i <= 4; ++i) EXPECT_EQ(lines[static_cast<std::size_t>(i)], "refused");
  EXPECT_EQ(lines[5], "wrote") << "the job's own progress file and checkpoint directory are writable";
}

TEST_F(JobAccounts, EachUserRunsAsTheMappedAccountAndCannotReadAnothersJobDirectories) {
  const std::string map = cluster.dir() + "/user-map.json";
  std::ofstream(map) << R"({"alice": "daemon"})";
  start_agent({"--user-map", map});
  const auto alice = run("id -u; pwd; echo \"$TRAINYARD_CHECKPOINT_DIR\"; echo secret > mine.txt; "
                         "echo secret > \"$TRAINYARD_CHECKPOINT_DIR/mine.txt\"",
                         token_of("alice"));
  ASSERT_EQ(alice.size(), 3u) << ::testing::PrintToString(alice);
  EXPECT_EQ(alice[0], uid_of("daemon"));
  const std::string work = alice[1], checkpoints = alice[2];
  EXPECT_EQ(read_text(work + "/mine.txt"), "secret") << "the job starts in its attempt directory";

  const auto bob = run("id -u; " + try_to_read(work + "/mine.txt") + "; " + try_to_read(work) + "; " +
                           try_to_read(checkpoints + "/mine.txt") + "; " + try_to_read(checkpoints),
                       token_of("bob"));
  ASSERT_EQ(bob.size(), 5u) << ::testing::PrintToString(bob);
  EXPECT_EQ(bob[0], uid_of("nobody")) << "an unmapped user runs as --job-user";
  for (std::size_t i = 1; i < bob.size(); ++i) EXPECT_EQ(bob[i], "refused");
}

TEST_F(JobAccounts, AllowRootJobsRestoresRoot) {
  start_agent({"--allow-root-jobs"});
  EXPECT_EQ(run("id -u"), std::vector<std::string>{"0"});
}

TEST_F(JobAccounts, AnAgentWithAMapToAMissingAccountRefusesToStartNamingTheKey) {
  const std::string map = cluster.dir() + "/user-map.json";
  std::ofstream(map) << R"({"carol": "no-such-account-xyz"})";
  cluster.start_agent("node-a", AgentSpec{4, {"--user-map", map}, ""});
  const auto status = cluster.agent("node-a").wait_exit(10s);
  ASSERT_TRUE(status);
  EXPECT_EQ(WEXITSTATUS(*status), 2);
  const std::string log = read_text(cluster.dir() + "/agent-node-a.log");
  EXPECT_NE(log.find("--user-map: \"carol\": no Unix account \"no-such-account-xyz\""), std::string::npos) << log;
}

}  // namespace
}  // namespace trainyard::testing
