// Durability: what the daemon acknowledged survives kill -9.
#include <signal.h>

#include <gtest/gtest.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

TEST(Recovery, Kill9AfterTwoHundredAcknowledgedSubmissionsLosesNone) {
  Cluster cluster;
  cluster.start_daemon();
  cluster.start_agent("node-a");
  cluster.wait_for_nodes(1);
  std::map<std::int64_t, std::string> acknowledged;  // id -> name
  for (int i = 0; i < 200; ++i) {
    // A mix: some finish, some are still pending (they need more nodes than exist, and wait for
    // them) at the kill.
    const bool runnable = i % 4 == 0;
    const Json spec = {{"name", "job-" + std::to_string(i)},
                       {"nodes", runnable ? 1 : 2},
                       {"wait_for_capacity", true},
                       {"command", {{"argv", {"/bin/true"}}}}};
    const auto r = cluster.api("POST", "/v1/jobs", spec.dump());
    ASSERT_EQ(r.status, 201) << r.body.dump();
    acknowledged[r.body["id"].get<std::int64_t>()] = spec["name"];
  }
  cluster.wait_job_state(acknowledged.begin()->first, "SUCCEEDED", 20s);
  // States as the daemon reported them just before the crash.
  std::map<std::int64_t, std::string> before;
  const Json listed = cluster.api("GET", "/v1/jobs?limit=1000").body["jobs"];
  for (const auto& job : listed) before[job["id"]] = job["state"];

  cluster.kill_daemon(SIGKILL);
  cluster.start_daemon();

  const auto list = cluster.api("GET", "/v1/jobs?limit=1000");
  ASSERT_EQ(list.status, 200);
  std::map<std::int64_t, Json> after;
  for (const auto& job : list.body["jobs"]) after[job["id"]] = job;
  ASSERT_EQ(after.size(), 200u);
  for (const auto& [id, name] : acknowledged) {
    ASSERT_TRUE(after.contains(id)) << "job " << id << " was acknowledged but is gone";
    EXPECT_EQ(after[id]["name"], name);
    const std::string state = after[id]["state"];
    // A finished job stays finished; a pending one is still pending (no agent can run 2 nodes).
    if (before[id] == "SUCCEEDED") {
      EXPECT_EQ(state, "SUCCEEDED") << id;
    }
    if (after[id]["spec"]["nodes"] == 2) {
      EXPECT_EQ(state, "PENDING") << id;
    }
  }
  // And the restarted daemon still runs work: the agent reconnects by itself.
  cluster.wait_for_nodes(1);
  const auto id = cluster.submit({{"name", "after-restart"}, {"command", {{"argv", {"/bin/true"}}}}});
  cluster.wait_job_state(id, "SUCCEEDED", 20s);
}

TEST(Recovery, JobsRunningAcrossADaemonRestartFinishWithoutARetry) {
  Cluster cluster;
  cluster.start_daemon();
  cluster.start_agent("node-a");
  cluster.wait_for_nodes(1);
  const std::string gate = cluster.dir() + "/gate";
  const Json spec = {{"name", "long"},
                     {"cores_per_node", 1},
                     {"command", {{"argv", {"/bin/sh", "-c", "while [ ! -f " + gate + " ]; do sleep 0.05; done"}}}}};
  const auto first = cluster.submit(spec);
  const auto second = cluster.submit(spec);
  cluster.wait_job_state(first, "RUNNING", 20s);
  cluster.wait_job_state(second, "RUNNING", 20s);
  cluster.kill_daemon(SIGKILL);
  cluster.start_daemon();
  cluster.wait_for_nodes(1);
  { std::ofstream(gate) << "go"; }
  for (const auto id : {first, second}) {
    const Json job = cluster.wait_job_state(id, "SUCCEEDED", 20s);
    EXPECT_EQ(job["attempts"], 1) << job.dump(2);
    EXPECT_EQ(job["infra_retries"], 0) << job.dump(2);
  }
}

}  // namespace
}  // namespace trainyard::testing

namespace trainyard::testing {
namespace {

TEST(Recovery, AnAgentStoppedUntilItsJobMovedOnIsFencedAndCheckpointsStayOneLine) {
  Cluster cluster;
  cluster.start_daemon();
  for (int i = 0; i < 3; ++i) cluster.start_agent("trn-" + std::to_string(i));
  cluster.wait_for_nodes(3);
  const auto id = cluster.submit({{"name", "partitioned"},
                                  {"nodes", 2},
                                  {"kind", "simulated"},
                                  {"workload", {{"steps", 100}, {"step_ms", 40}, {"checkpoint_every", 5}}}});
  const std::string path = "/v1/jobs/" + std::to_string(id);
  cluster.wait_job_state(id, "RUNNING", 30s);
  ASSERT_TRUE(eventually([&] { return cluster.api("GET", path + "/checkpoints").body["checkpoints"].size() >= 2; }, 30s));
  const Json first = cluster.api("GET", path + "/attempts").body["attempts"][0];
  const std::string victim = first["nodes"][0];  // rank 0: the one that writes checkpoints
  cluster.agent(victim).signal(SIGSTOP);

  // The job moves on without it: node lost, retried elsewhere, resumed, finished.
  cluster.wait_job_state(id, "SUCCEEDED", 60s);
  cluster.agent(victim).signal(SIGCONT);
  // Back, the stale rank is fenced: killed if its agent still runs it, or, when it already died of
  // its vanished peers (the usual case: its next collective fails at once), its late exit is ignored.
  const std::string killed = "event=attempt_fenced attempt=" + first["id"].dump() + " node=" + victim;
  const std::string ignored = "event=stale_exit_ignored attempt=" + first["id"].dump() + " node=" + victim;
  ASSERT_TRUE(eventually([&] {
    const std::string log = cluster.daemon_log();
    return log.find(killed) != std::string::npos || log.find(ignored) != std::string::npos;
  }, 30s)) << "the stale attempt was not fenced; daemon log:\n" << cluster.daemon_log();

  // Every checkpoint verifies and the steps only go forward: nothing of the stale attempt's.
  const Json checkpoints = cluster.api("GET", path + "/checkpoints").body["checkpoints"];
  ASSERT_FALSE(checkpoints.empty());
  std::int64_t last = 0;
  for (const auto& c : checkpoints) {
    EXPECT_TRUE(c["valid"].get<bool>()) << c.dump();
    EXPECT_GT(c["step"].get<std::int64_t>(), last) << checkpoints.dump(2);
    last = c["step"].get<std::int64_t>();
  }
  EXPECT_EQ(last, 100);
  const Json attempts = cluster.api("GET", path + "/attempts").body["attempts"];
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0]["failure_class"], "node_lost");
  EXPECT_EQ(attempts[1]["steps_completed"], 100);
}

}  // namespace
}  // namespace trainyard::testing

namespace trainyard::testing {
namespace {

// Recovery in seconds: kill -9 of one agent of a 2-node job. Its connections close at once; the gang
// fails as node_lost when the disconnect grace ends (or at once, when the surviving rank reports
// the closed data plane) and runs again on other nodes from its checkpoint, while the node
// timeout (60 s here) has not come near: waiting for it is what the test rules out.
TEST(Recovery, AKilledAgentsGangRunsAgainElsewhereLongBeforeTheNodeTimeout) {
  Cluster cluster;
  cluster.start_daemon({"--node-timeout-ms", "60000", "--disconnect-grace-ms", "1000"});
  for (int i = 0; i < 4; ++i) cluster.start_agent("trn-" + std::to_string(i));
  cluster.wait_for_nodes(4);
  const auto id = cluster.submit({{"name", "resumes"},
                                  {"nodes", 2},
                                  {"kind", "simulated"},
                                  {"workload", {{"steps", 200}, {"step_ms", 40}, {"checkpoint_every", 10}}}});
  const std::string path = "/v1/jobs/" + std::to_string(id);
  cluster.wait_job_state(id, "RUNNING", 30s);
  ASSERT_TRUE(eventually([&] { return !cluster.api("GET", path + "/checkpoints").body["checkpoints"].empty(); }, 30s));
  const Json first = cluster.api("GET", path + "/attempts").body["attempts"][0];
  const std::string victim = first["nodes"][0];  // rank 0, the periodic writer: rank 1 saves at the loss
  cluster.stop_agent(victim, SIGKILL);

  Json attempts;
  ASSERT_TRUE(eventually([&] {
    attempts = cluster.api("GET", path + "/attempts").body["attempts"];
    return attempts.size() == 2 && attempts[1]["state"] == "RUNNING";
  }, 20s)) << "the job did not run again before the node timeout; attempts: " << attempts.dump(2) << "\ndaemon log:\n"
           << cluster.daemon_log();
  EXPECT_EQ(attempts[0]["failure_class"], "node_lost") << attempts[0].dump(2);
  EXPECT_TRUE(attempts[0]["infrastructure"].get<bool>());
  EXPECT_NE(attempts[0]["reason"].get<std::string>().find("the agent of node " + victim + " disconnected"), std::string::npos)
      << attempts[0].dump(2);
  for (const auto& node : attempts[1]["nodes"]) EXPECT_NE(node, victim);
  // The survivor wrote the step it had completed when its peer's connection closed, and the
  // resume starts there rather than at the last periodic checkpoint.
  const std::string resumed_from = attempts[1].value("resumed_from", "");
  ASSERT_FALSE(resumed_from.empty()) << "it resumes from its checkpoint: " << attempts[1].dump(2);
  const std::string survivor_log = cluster.api("GET", path + "/logs?attempt=1&rank=1").body["logs"][0].value("text", "");
  std::smatch saved;
  ASSERT_TRUE(std::regex_search(survivor_log, saved, std::regex("checkpoint written: step (\\d+)"))) << survivor_log;
  EXPECT_EQ(std::filesystem::path(resumed_from).filename().string(),
            "step-" + std::string(10 - saved[1].length(), '0') + saved[1].str())
      << survivor_log;
  const Json job = cluster.wait_job_state(id, "SUCCEEDED", 60s);
  EXPECT_EQ(job["attempts"], 1) << "the lost node did not use one of the job's attempts: " << job.dump(2);
}

}  // namespace
}  // namespace trainyard::testing
