// Jobs never run as root: a root agent runs command jobs as an unprivileged account, per
// submitting user with --user-map, else one of the job's own, and a job reaches neither another
// job's directories nor the agent's credentials. These tests need the agent to be root (as here
// and in CI).
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

  // Runs `script` as the token's user to completion; returns its log lines. `last_job` is its id.
  std::vector<std::string> run(const std::string& script, const std::string& token = "") {
    const Json spec = {{"name", "who"},
                       {"nodes", 1},
                       {"cores_per_node", 1},
                       {"command", {{"argv", {"/bin/sh", "-c", script}}}}};
    const auto id = last_job = cluster.submit(spec, token);
    const Json job = cluster.wait_job_state(id, "SUCCEEDED", 30s);
    EXPECT_EQ(job["exit_code"], 0) << job.dump(2);
    const auto logs = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/logs");
    std::vector<std::string> lines;
    if (logs.status != 200 || logs.body["logs"].empty()) return lines;
    std::istringstream text(logs.body["logs"][0]["text"].get<std::string>());
    for (std::string line; std::getline(text, line);) lines.push_back(line);
    return lines;
  }

  // The uid a job runs as by default: its own (the agent's default --job-uid-base, shifted by the cluster's name).
  std::string uid_of_job_text(std::int64_t id) const { return std::to_string(cluster.job_account(id).uid); }

  std::string token_of(const std::string& user) {
    return cluster.api("POST", "/v1/tokens", Json{{"user", user}}.dump()).body["token"];
  }

  Cluster cluster;
  std::int64_t last_job = 0;
};

// Prints "refused" when the file `path` cannot be read nor the directory `path` listed, "LEAKED"
// when it can.
std::string try_to_read(const std::string& path) {
  return "if cat " + path + " >/dev/null 2>&1 || ls -A " + path + "/ >/dev/null 2>&1; then echo LEAKED " + path +
         "; else echo refused; fi";
}

TEST_F(JobAccounts, ARootAgentRunsEachCommandJobAsItsOwnAccountWhichCannotReadTheAgentsSecrets) {
  start_agent({});
  const std::string credential = cluster.dir() + "/agents/node-a/node.credential";
  ASSERT_TRUE(eventually([&] { return fs::exists(credential); }, 10s));
  const auto lines = run("id -u; " + try_to_read(credential) + "; " + try_to_read(cluster.dir() + "/data/join.token") +
                         "; " + try_to_read(cluster.dir() + "/data/admin.token") + "; " +
                         try_to_read(cluster.dir() + "/data/trainyard.db") +
                         "; echo 3 > \"$TRAINYARD_PROGRESS_FILE\" && echo ok > \"$TRAINYARD_CHECKPOINT_DIR/mine\" && "
                         "echo wrote");
  ASSERT_EQ(lines.size(), 6u) << ::testing::PrintToString(lines);
  EXPECT_EQ(lines[0], uid_of_job_text(last_job));
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
  EXPECT_EQ(bob[0], uid_of_job_text(last_job)) << "an unmapped user's job runs as its own account";
  for (std::size_t i = 1; i < bob.size(); ++i) EXPECT_EQ(bob[i], "refused");
}

TEST_F(JobAccounts, EachJobGetsItsOwnUidEachAttemptItsOwnGidWithoutGroupsAndItsWorkDirAsHome) {
  start_agent({});
  const auto first = run("id -u; id -g; id -G; echo \"$HOME\"; pwd; echo \"$TRAINYARD_ATTEMPT_ID\"");
  const std::int64_t first_job = last_job;
  const auto second = run("id -u");
  ASSERT_EQ(first.size(), 6u) << ::testing::PrintToString(first);
  EXPECT_EQ(first[0], uid_of_job_text(first_job));
  // The attempt's own group, from the range's count (2^28) of gids past the per-job uids.
  const std::string attempt_gid = std::to_string(cluster.job_account(first_job, std::stoll(first[5])).gid);
  EXPECT_GE(std::stoll(attempt_gid), 0x70000000);
  EXPECT_EQ(first[1], attempt_gid);
  EXPECT_EQ(first[2], attempt_gid) << "no supplementary groups";
  EXPECT_EQ(first[3], first[4]) << "HOME is the job's work directory";
  EXPECT_EQ(second, std::vector<std::string>{uid_of_job_text(last_job)});
  EXPECT_NE(first[0], second[0]);
}

TEST_F(JobAccounts, AnExplicitJobUserIsSharedByEveryJob) {
  start_agent({"--job-user", "nobody"});
  EXPECT_EQ(run("id -u"), std::vector<std::string>{uid_of("nobody")});
  EXPECT_EQ(run("id -u"), std::vector<std::string>{uid_of("nobody")});
}

TEST_F(JobAccounts, AJobIdPastThePerJobRangeIsRefusedAtLaunchSayingWhy) {
  start_agent({"--job-uid-count", "1"});  // job ids 0..0: the first job, id 1, has no account
  const Json spec = {{"name", "who"}, {"nodes", 1}, {"command", {{"argv", {"/bin/true"}}}}};
  const auto id = cluster.submit(spec);
  cluster.wait_job_state(id, "FAILED", 30s);
  const std::string attempts = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts").body.dump();
  EXPECT_NE(attempts.find("launch refused: job_id: job " + std::to_string(id) + " has no account of its own"),
            std::string::npos)
      << attempts;
}

// Prints "refused" when the command fails, "LEAKED <what>" when it succeeds.
std::string try_to(const std::string& command, const std::string& what) {
  return "if " + command + " >/dev/null 2>&1; then echo LEAKED " + what + "; else echo refused; fi";
}

TEST_F(JobAccounts, AnotherUsersJobCanNeitherReadNorSignalNorPlantIntoAJob) {
  start_agent({});
  const std::string shared = cluster.shared_dir();
  // Alice's first attempt leaves data, a log line and a process for Bob to go after, then fails
  // once the test says so; her retry says what it resumes from.
  const std::string alice_script =
      "if [ -n \"$TRAINYARD_RESUME_FROM\" ]; then echo \"resumed from $TRAINYARD_RESUME_FROM\"; exit 0; fi; "
      "mkdir \"$TRAINYARD_CHECKPOINT_DIR/step-5\" && echo alice-data > \"$TRAINYARD_CHECKPOINT_DIR/step-5/data\"; "
      "echo alice-log-line; "
      "echo $$ > " + shared + "/alice.pid; echo \"$TRAINYARD_CHECKPOINT_DIR\" > " + shared + "/alice.ckpt; "
      "pwd > " + shared + "/alice.work; touch " + shared + "/alice.ready; "
      "while [ ! -e " + shared + "/alice.go ]; do sleep 0.05; done; exit 1";
  const Json alice_spec = {{"name", "alice"},
                           {"nodes", 1},
                           {"cores_per_node", 1},
                           {"retry", {{"attempts", 2}}},
                           {"command", {{"argv", {"/bin/sh", "-c", alice_script}}, {"env", {{"ALICE_SECRET", "s3cret"}}}}}};
  const auto alice = cluster.submit(alice_spec, token_of("alice"));
  ASSERT_TRUE(eventually([&] { return fs::exists(shared + "/alice.ready"); }, 30s)) << cluster.daemon_log();
  const std::string pid = read_text(shared + "/alice.pid"), work = read_text(shared + "/alice.work"),
                    checkpoints = read_text(shared + "/alice.ckpt");
  auto trim = [](std::string text) { return text.substr(0, text.find('\n')); };

  const auto bob = run(try_to("cat " + trim(checkpoints) + "/step-5/data", "checkpoint data") + "; " +
                           try_to("cat " + trim(work) + "/rank-0.log", "rank log") + "; " +
                           try_to("cat /proc/" + trim(pid) + "/environ", "environ") + "; " +
                           try_to("kill -STOP " + trim(pid), "kill -STOP") + "; " +
                           try_to("mkdir " + trim(checkpoints) + "/step-999999", "planted step"),
                       token_of("bob"));
  EXPECT_EQ(bob, std::vector<std::string>(5, "refused"));

  // What Bob's job could not plant, a step directory of his account's in Alice's checkpoints
  // (as the shared account of old could leave), is not resumed from either.
  const std::string planted = trim(checkpoints) + "/step-999999";
  fs::create_directory(planted);
  ASSERT_EQ(::lchown(planted.c_str(), static_cast<uid_t>(std::stoul(uid_of_job_text(last_job))),
                     static_cast<gid_t>(std::stoul(uid_of_job_text(last_job)))),
            0);
  std::ofstream(shared + "/alice.go").close();
  cluster.wait_job_state(alice, "SUCCEEDED", 30s);
  const auto logs = cluster.api("GET", "/v1/jobs/" + std::to_string(alice) + "/logs");
  ASSERT_EQ(logs.status, 200) << logs.body.dump();
  EXPECT_NE(logs.body.dump().find("resumed from " + trim(checkpoints) + "/step-5"), std::string::npos)
      << logs.body.dump(2);
  const std::string listed = cluster.api("GET", "/v1/jobs/" + std::to_string(alice) + "/checkpoints").body.dump();
  EXPECT_NE(listed.find("written by uid " + uid_of_job_text(last_job) + ", not by the job's account"), std::string::npos)
      << listed;
}

TEST_F(JobAccounts, AWorkDirectoryAnotherAccountMadeIsNotGivenToTheJob) {
  start_agent({});
  // Where the first attempts' directories would go, made by another account with a file in each.
  for (int attempt = 1; attempt <= 5; ++attempt) {
    const std::string dir = cluster.attempt_dir("node-a", attempt);
    fs::create_directory(dir);
    std::ofstream(dir + "/planted") << "x";
    ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  }
  const auto id = cluster.submit(Json{{"name", "w"}, {"nodes", 1}, {"command", {{"argv", {"/bin/true"}}}}});
  cluster.wait_job_state(id, "FAILED", 30s);
  const std::string attempts = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts").body.dump();
  EXPECT_NE(attempts.find("already exists and belongs to uid 65534"), std::string::npos) << attempts;
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
