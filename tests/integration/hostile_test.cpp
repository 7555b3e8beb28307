// Hostile jobs and clients (issue #12): what one user's job or a forged client does must not take
// an agent or the daemon down, nor reach another user's work.
#include <signal.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

Json command_job(const std::string& name, const std::string& script) {
  return Json{{"name", name}, {"nodes", 1}, {"command", {{"argv", {"/bin/sh", "-c", script}}}}};
}

bool process_alive(pid_t pid) { return ::kill(pid, 0) == 0; }

pid_t read_pid(const std::string& path) {
  const std::string text = read_text(path);
  return text.empty() ? 0 : static_cast<pid_t>(std::stol(text));
}

class Hostile : public ::testing::Test {
 protected:
  void SetUp() override {
    // A secret in the agent's environment, which no job may see.
    ::setenv("TRAINYARD_TEST_SECRET", "do-not-leak-4f2a", 1);
    cluster.start_daemon();
    cluster.start_agent("node-a");
    cluster.wait_for_nodes(1);
    ::unsetenv("TRAINYARD_TEST_SECRET");
  }
  Cluster cluster;
};

TEST_F(Hostile, InvalidUtf8AndHugeOutputDoNotTakeTheAgentDown) {
  // A stray 0xFF, a euro sign split across the 4 KiB exit tail by a progress bar without newlines,
  // and 24 MiB of random bytes before it.
  const auto id = cluster.submit(command_job(
      "binary-output",
      "printf 'hello\\377\\n'; head -c 25165824 /dev/urandom; printf '\\n'; "
      "i=0; while [ $i -lt 1500 ]; do printf '\\r\\342\\202\\254%d' $i; i=$((i+1)); done; printf 'tail \\377 end\\n'"));
  const Json job = cluster.wait_job_state(id, "SUCCEEDED", 120s);
  EXPECT_EQ(job["exit_code"], 0) << job.dump(2);
  EXPECT_TRUE(cluster.agent("node-a").running());
  const auto logs = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/logs");
  ASSERT_EQ(logs.status, 200) << logs.body.dump();
  const std::string text = logs.body["logs"][0]["text"];
  EXPECT_NE(text.find("tail \xEF\xBF\xBD end"), std::string::npos);  // the 0xFF, replaced
  // The node is still connected and takes the next job.
  const auto next = cluster.submit(command_job("after", "echo fine"));
  cluster.wait_job_state(next, "SUCCEEDED", 30s);
}

TEST_F(Hostile, AJobSeesNoneOfTheAgentsEnvironmentAndTheDaemonsFilesArePrivate) {
  const auto id = cluster.submit(command_job("env", "env"));
  cluster.wait_job_state(id, "SUCCEEDED", 30s);
  const std::string text = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/logs").body["logs"][0]["text"];
  EXPECT_NE(text.find("RANK=0"), std::string::npos) << text;
  EXPECT_EQ(text.find("TRAINYARD_TEST_SECRET"), std::string::npos) << text;
  EXPECT_EQ(text.find("do-not-leak"), std::string::npos) << text;

  const auto mode = [](const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 0777;
  };
  EXPECT_EQ(mode(cluster.dir() + "/data"), 0700u);
  EXPECT_EQ(mode(cluster.dir() + "/data/trainyard.db"), 0600u);
  EXPECT_EQ(mode(cluster.dir() + "/data/admin.token"), 0600u);
  EXPECT_EQ(mode(cluster.dir() + "/agents/node-a/attempts/1"), 0700u);
}

TEST_F(Hostile, AJobsProcessesDoNotOutliveAKilledAgent) {
  // The job's leader and a child it leaves in its process group record their pids, then wait.
  const std::string leader_file = cluster.dir() + "/leader.pid", child_file = cluster.dir() + "/child.pid";
  const auto id = cluster.submit(command_job("orphan", "sleep 600 & echo $! > " + child_file + "; echo $$ > " +
                                                           leader_file + "; wait"));
  cluster.wait_job_state(id, "RUNNING", 30s);
  ASSERT_TRUE(eventually([&] { return read_pid(leader_file) > 0 && read_pid(child_file) > 0; }, 30s));
  const pid_t leader = read_pid(leader_file), child = read_pid(child_file);

  cluster.stop_agent("node-a", SIGKILL);
  EXPECT_TRUE(eventually([&] { return !process_alive(leader); }, 20s)) << "the leader outlived its agent";

  // What the leader left in its group is killed by the agent's next life, before it takes work.
  cluster.start_agent("node-a");
  EXPECT_TRUE(eventually([&] { return !process_alive(child); }, 20s)) << "the child outlived the restart";
}

TEST_F(Hostile, FifosAndSymlinksAsCheckpointFilesDoNotHangTheDaemon) {
  // Named like checkpoint files: FIFOs, which block whoever opens them for reading, and symlinks.
  const auto id = cluster.submit(command_job(
      "fifo-checkpoints",
      "d=$TRAINYARD_CHECKPOINT_DIR; mkdir -p $d/step-0000000001 $d/step-0000000002 $d/step-0000000003 && "
      "mkfifo $d/step-0000000001/manifest.json && ln -s /dev/zero $d/step-0000000002/manifest.json && "
      "mkfifo $d/step-0000000003/params.bin && "
      "echo '{\"files\":[{\"name\":\"params.bin\",\"bytes\":1,\"sha256\":\"00\"}]}' > $d/step-0000000003/manifest.json && "
      "ln -s $d/step-0000000001 $d/step-0000000004"));
  cluster.wait_job_state(id, "SUCCEEDED", 30s);

  const auto listed = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/checkpoints");
  ASSERT_EQ(listed.status, 200) << listed.body.dump();
  const Json checkpoints = listed.body["checkpoints"];
  ASSERT_EQ(checkpoints.size(), 3u) << "a symlinked step directory is not listed: " << checkpoints.dump(2);
  for (const auto& c : checkpoints) EXPECT_FALSE(c["valid"].get<bool>()) << c.dump();
  // Submits and reads still go through.
  const auto next = cluster.submit(command_job("after", "echo fine"));
  cluster.wait_job_state(next, "SUCCEEDED", 30s);
}

TEST_F(Hostile, ACheckpointPlantedByAnotherUsersJobIsNotResumedFrom) {
  cluster.start_agent("node-b");
  cluster.wait_for_nodes(2);
  const auto token_for = [&](const std::string& user) {
    return cluster.api("POST", "/v1/tokens", Json{{"user", user}}.dump()).body["token"].get<std::string>();
  };
  const std::string alice = token_for("alice"), bob = token_for("bob");
  const auto victim = cluster.submit({{"name", "victim"},
                                      {"nodes", 1},
                                      {"kind", "simulated"},
                                      {"retry", {{"attempts", 2}}},
                                      {"workload", {{"steps", 400}, {"step_ms", 25}, {"checkpoint_every", 5}}}},
                                     alice);
  const std::string path = "/v1/jobs/" + std::to_string(victim);
  const auto recorded = [&] {
    std::vector<std::string> paths;
    const Json listed = cluster.api("GET", path + "/checkpoints", "", alice).body["checkpoints"];
    for (const auto& c : listed) {
      if (c["valid"].get<bool>() && !c["recorded_by_attempt"].is_null()) paths.push_back(c["path"]);
    }
    return paths;
  };
  ASSERT_TRUE(eventually([&] { return !recorded().empty(); }, 30s));

  // Bob's job copies Alice's newest checkpoint to a newer step: complete and self-consistent.
  const auto planter = cluster.submit(
      command_job("planter", "v=$(dirname $TRAINYARD_CHECKPOINT_DIR)/job-" + std::to_string(victim) +
                                 "; src=$(ls -d $v/step-* | tail -1); cp -r $src $v/.plant && mv $v/.plant $v/step-0000000399"),
      bob);
  cluster.wait_job_state(planter, "SUCCEEDED", 30s);
  const Json listed = cluster.api("GET", path + "/checkpoints", "", alice).body["checkpoints"];
  ASSERT_FALSE(listed.empty());
  EXPECT_EQ(listed.back()["step"], 399) << listed.dump(2);
  EXPECT_FALSE(listed.back()["valid"].get<bool>()) << listed.dump(2);
  EXPECT_NE(listed.back()["problem"].get<std::string>().find("not recorded"), std::string::npos) << listed.dump(2);

  // Alice's job loses its node and is retried on the other one.
  const std::string node = cluster.api("GET", path + "/attempts", "", alice).body["attempts"][0]["nodes"][0];
  cluster.stop_agent(node, SIGKILL);
  cluster.wait_job_state(victim, "SUCCEEDED", 60s);
  const Json attempts = cluster.api("GET", path + "/attempts", "", alice).body["attempts"];
  ASSERT_EQ(attempts.size(), 2u) << attempts.dump(2);
  ASSERT_TRUE(attempts[1].contains("resumed_from")) << attempts.dump(2);
  const std::string resumed = attempts[1]["resumed_from"];
  EXPECT_EQ(resumed.find("step-0000000399"), std::string::npos) << "resumed from Bob's planted checkpoint";
  EXPECT_NE(resumed.find("/job-" + std::to_string(victim) + "/step-"), std::string::npos) << resumed;
  EXPECT_NE(cluster.daemon_log().find("event=checkpoint_recorded job=" + std::to_string(victim)), std::string::npos);
}

}  // namespace
}  // namespace trainyard::testing
