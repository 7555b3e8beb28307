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

TEST_F(Hostile, AUserReachesNeitherTheSystemShareNorOtherUsersJobIdsNorTheDataPlane) {
  const std::string alice = cluster.api("POST", "/v1/tokens", R"({"user":"alice"})").body["token"];
  const std::string bob = cluster.api("POST", "/v1/tokens", R"({"user":"bob"})").body["token"];
  auto submit_to = [&](const std::string& share) {
    Json spec = command_job("x", "true");
    spec["share"] = share;
    return cluster.api("POST", "/v1/jobs", spec.dump(), alice);
  };
  // Canaries are served first from `system`; nobody else may queue there, nor invent a share.
  const auto system = submit_to("system");
  EXPECT_EQ(system.status, 403) << system.body.dump();
  EXPECT_EQ(system.body["error"]["field"], "share");
  const auto invented = submit_to("alices-own");
  EXPECT_EQ(invented.status, 400) << invented.body.dump();
  EXPECT_EQ(invented.body["error"]["field"], "share");

  // Another user's job answers exactly as one that does not exist.
  const auto id = cluster.submit(command_job("bobs", "true"), bob);
  const auto missing = id + 1000;
  const auto other = cluster.api("GET", "/v1/jobs/" + std::to_string(id), "", alice);
  const auto none = cluster.api("GET", "/v1/jobs/" + std::to_string(missing), "", alice);
  EXPECT_EQ(other.status, 404);
  EXPECT_EQ(none.status, 404);
  Json expected = none.body;
  expected["error"]["message"] = "job " + std::to_string(id) + " does not exist";
  EXPECT_EQ(other.body, expected) << none.body.dump();

  // An encoded slash does not route.
  const auto encoded = cluster.api("GET", "/v1%2Fnodes", "", alice);
  EXPECT_EQ(encoded.status, 400) << encoded.body.dump();
  EXPECT_EQ(encoded.body["error"]["field"], "path");

  // The data plane's addresses are for admins.
  const auto admin_nodes = cluster.api("GET", "/v1/nodes");
  ASSERT_EQ(admin_nodes.body["nodes"].size(), 1u);
  EXPECT_FALSE(admin_nodes.body["nodes"][0].value("data_addr", "").empty()) << admin_nodes.body.dump();
  const auto user_nodes = cluster.api("GET", "/v1/nodes", "", alice);
  ASSERT_EQ(user_nodes.status, 200);
  ASSERT_EQ(user_nodes.body["nodes"].size(), 1u);
  EXPECT_FALSE(user_nodes.body["nodes"][0].contains("data_addr")) << user_nodes.body.dump();
}

}  // namespace
}  // namespace trainyard::testing
