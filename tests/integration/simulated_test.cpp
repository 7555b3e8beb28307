// The simulated Trainium kernel end to end: data-parallel training over real TCP collectives
// between agent processes, driven through the REST API.
#include <signal.h>

#include <gtest/gtest.h>

#include "proto/time.h"
#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

TEST(Simulated, FourNodeTrainingJobRunsEndToEnd) {
  Cluster cluster;
  cluster.start_daemon();
  for (int i = 0; i < 4; ++i) cluster.start_agent("trn-" + std::to_string(i));
  cluster.wait_for_nodes(4);
  const auto id = cluster.submit({{"name", "mlp"},
                                  {"nodes", 4},
                                  {"kind", "simulated"},
                                  {"workload", {{"steps", 40}, {"global_batch", 64}, {"checkpoint_every", 10}}}});
  const Json job = cluster.wait_job_state(id, "SUCCEEDED", 60s);
  const auto attempts = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts");
  ASSERT_EQ(attempts.body["attempts"].size(), 1u);
  EXPECT_EQ(attempts.body["attempts"][0]["nodes"].size(), 4u);
  EXPECT_EQ(attempts.body["attempts"][0]["steps_completed"], 40);
  const auto logs = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/logs?rank=3");
  const std::string text = logs.body["logs"][0]["text"];
  EXPECT_NE(text.find("step=40 loss="), std::string::npos) << text;
  EXPECT_NE(text.find("rank 3 of 4"), std::string::npos) << text;
  const auto checkpoints = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/checkpoints").body["checkpoints"];
  ASSERT_EQ(checkpoints.size(), 3u) << checkpoints.dump();  // keep_checkpoints defaults to 3
  EXPECT_EQ(checkpoints.back()["step"], 40);

  // Rank 0's per-step metrics reached the daemon's store, the last of them with the exit.
  const Json metrics = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/metrics").body;
  ASSERT_EQ(metrics["steps"], 40) << metrics.dump();
  ASSERT_EQ(metrics["points"].size(), 40u);
  EXPECT_EQ(metrics["points"][39]["step"], 40);
  EXPECT_LT(metrics["points"][39]["loss"].get<double>(), metrics["points"][0]["loss"].get<double>())
      << "the student did not learn:\n" << metrics.dump();
  EXPECT_GT(metrics["points"][0]["samples_per_s"].get<double>(), 0);
  const Json coarse = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/metrics?max_points=4").body;
  EXPECT_EQ(coarse["points"].size(), 4u);
  EXPECT_EQ(coarse["bucket_steps"], 10);
}

TEST(Simulated, FaultsInjectedThroughTheApiReachTheDeviceAndAreListed) {
  Cluster cluster;
  cluster.start_daemon();
  cluster.start_agent("trn-0", AgentSpec{.cores = 4, .extra_flags = {"--fault", "link=throttle:1G"}});
  cluster.wait_for_nodes(1);
  const auto faults_of = [&] { return cluster.api("GET", "/v1/nodes/trn-0").body["faults"]; };
  EXPECT_EQ(faults_of(), Json({"link=throttle:1GB"})) << "faults set by agent flag are listed too";

  // A simulated rank trains on its node's first free core: crash core 0 and the job fails on it.
  const auto set = cluster.api("PUT", "/v1/nodes/trn-0/faults", R"({"faults":["core:0=crash"]})");
  ASSERT_EQ(set.status, 202) << set.body.dump();
  ASSERT_TRUE(eventually([&] { return faults_of() == Json({"core:0=crash"}); }, 10s)) << faults_of().dump();
  const Json spec = {{"name", "victim"}, {"nodes", 1}, {"kind", "simulated"}, {"workload", {{"steps", 5}}}};
  const Json failed = cluster.wait_job_state(cluster.submit(spec), "FAILED", 30s);
  EXPECT_NE(failed.dump().find("NeuronCore 0 crashed"), std::string::npos) << failed.dump();

  ASSERT_EQ(cluster.api("DELETE", "/v1/nodes/trn-0/faults").status, 202);
  ASSERT_TRUE(eventually([&] { return faults_of().empty(); }, 10s)) << faults_of().dump();
  cluster.wait_job_state(cluster.submit(spec), "SUCCEEDED", 30s);
}

}  // namespace
}  // namespace trainyard::testing

namespace trainyard::testing {
namespace {

TEST(Simulated, AKilledAgentsJobResumesFromItsCheckpointElsewhereAndFinishes) {
  Cluster cluster;
  cluster.start_daemon();
  for (int i = 0; i < 3; ++i) cluster.start_agent("trn-" + std::to_string(i));
  cluster.wait_for_nodes(3);
  const auto id = cluster.submit({{"name", "resilient"},
                                  {"nodes", 2},
                                  {"kind", "simulated"},
                                  {"workload", {{"steps", 60}, {"step_ms", 40}, {"checkpoint_every", 5}}}});
  const Json running = cluster.wait_job_state(id, "RUNNING", 30s);
  const std::string path = "/v1/jobs/" + std::to_string(id);
  ASSERT_TRUE(eventually([&] { return cluster.api("GET", path + "/checkpoints").body["checkpoints"].size() >= 2; }, 30s));
  const std::string victim = cluster.api("GET", path + "/attempts").body["attempts"][0]["nodes"][1];
  cluster.stop_agent(victim, SIGKILL);

  const Json job = cluster.wait_job_state(id, "SUCCEEDED", 60s);
  EXPECT_EQ(job["infra_retries"], 1) << job.dump();
  const auto attempts = cluster.api("GET", path + "/attempts").body["attempts"];
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0]["failure_class"], "node_lost");
  EXPECT_TRUE(attempts[0]["infrastructure"].get<bool>());
  for (const auto& node : attempts[1]["nodes"]) EXPECT_NE(node, victim);
  EXPECT_EQ(attempts[1]["steps_completed"], 60);
  // The daemon chose the checkpoint and recorded it on the attempt (provenance).
  ASSERT_TRUE(attempts[1].contains("resumed_from")) << attempts.dump(2);
  EXPECT_NE(attempts[1]["resumed_from"].get<std::string>().find("/job-" + std::to_string(id) + "/step-"), std::string::npos);
  // Its provenance names that checkpoint with the manifest digest its writer reported, and the kernel.
  const Json provenance =
      cluster.api("GET", path + "/attempts/" + std::to_string(attempts[1]["number"].get<int>()) + "/provenance").body;
  EXPECT_EQ(provenance["checkpoint"]["path"], attempts[1]["resumed_from"]) << provenance.dump(2);
  EXPECT_EQ(provenance["checkpoint"]["manifest_sha256"].get<std::string>().size(), 64u) << provenance.dump(2);
  EXPECT_EQ(provenance["kernel"]["checkpoint_every"], 5);
  const std::string log = cluster.api("GET", path + "/logs?rank=0").body["logs"][0]["text"];
  EXPECT_NE(log.find("resuming from"), std::string::npos) << log;
  EXPECT_NE(log.find("step=60 loss="), std::string::npos) << log;
  EXPECT_EQ(log.find("step=1 loss="), std::string::npos) << "the second attempt restarted from scratch:\n" << log;
  // Every listed checkpoint verifies.
  const Json checkpoints = cluster.api("GET", path + "/checkpoints").body["checkpoints"];
  for (const auto& c : checkpoints) {
    EXPECT_TRUE(c["valid"].get<bool>()) << c.dump();
  }
}

}  // namespace
}  // namespace trainyard::testing

namespace trainyard::testing {
namespace {

TEST(Simulated, ARankHungByAFaultIsKilledAsStuckNamedAndRetriedAsAnInfrastructureFailure) {
  Cluster cluster;
  cluster.start_daemon();
  for (int i = 0; i < 3; ++i) cluster.start_agent("trn-" + std::to_string(i));
  cluster.wait_for_nodes(3);
  const auto id = cluster.submit({{"name", "hangs"},
                                  {"nodes", 2},
                                  {"kind", "simulated"},
                                  {"stuck_after_s", 2},
                                  {"retry", {{"attempts", 1}}},
                                  {"workload", {{"steps", 200}, {"step_ms", 20}, {"checkpoint_every", 20}}}});
  const std::string path = "/v1/jobs/" + std::to_string(id);
  cluster.wait_job_state(id, "RUNNING", 30s);
  // Hung after its first checkpoint, so the retry has one to resume from.
  ASSERT_TRUE(eventually([&] { return !cluster.api("GET", path + "/checkpoints").body["checkpoints"].empty(); }, 30s));
  const Json first = cluster.api("GET", path + "/attempts").body["attempts"][0];
  const std::string victim = first["nodes"][1];
  // A simulated rank trains on its node's core 0.
  ASSERT_EQ(cluster.api("PUT", "/v1/nodes/" + victim + "/faults", R"({"faults":["core:0=hang"]})").status, 202);

  Json attempt;
  ASSERT_TRUE(eventually([&] {
    attempt = cluster.api("GET", path + "/attempts").body["attempts"][0];
    return attempt.contains("diagnosis") && attempt["state"] != "RUNNING";
  }, 30s)) << attempt.dump(2) << "\nagent " << victim << ":\n"
           << read_text(cluster.dir() + "/agent-" + victim + ".log") << "\nagent " << first["nodes"][0].get<std::string>()
           << ":\n" << read_text(cluster.dir() + "/agent-" + first["nodes"][0].get<std::string>() + ".log");
  const std::string diagnosis = attempt["diagnosis"];
  EXPECT_NE(diagnosis.find("rank 1 (" + victim + ") blocked in"), std::string::npos) << diagnosis;
  const std::string healthy = first["nodes"][0];
  EXPECT_NE(diagnosis.find("rank 0 (" + healthy + ") waiting in all-reduce"), std::string::npos)
      << "the waiting rank was blamed: " << diagnosis;
  EXPECT_EQ(attempt["failure_class"], "stuck") << attempt.dump(2);
  // Detected within stuck_after_s plus one heartbeat (100 ms here) of the last step, by the daemon's
  // own timestamps; the rest of the allowance is the tick (50 ms) and scheduling on a loaded host.
  const auto silent_ms = to_unix_ms(*parse_time(attempt["stuck_detected_at"].get<std::string>())) -
                         to_unix_ms(*parse_time(attempt["last_progress_at"].get<std::string>()));
  EXPECT_LE(silent_ms, 2000 + 100 + 50 + 350) << attempt.dump(2);
  EXPECT_GE(silent_ms, 2000) << attempt.dump(2);

  // The node it hung on was tested before the retry was decided, failed (its core hangs), and left
  // service; so the hang was the system's fault, retried without using the job's only attempt.
  EXPECT_TRUE(attempt["infrastructure"].get<bool>()) << attempt.dump(2);
  const std::string reason = attempt["reason"];
  EXPECT_NE(reason.find("then " + victim + " failed health check"), std::string::npos) << reason;
  const Json node = cluster.api("GET", "/v1/nodes/" + victim).body;
  EXPECT_EQ(node["state"], "UNHEALTHY") << node.dump(2);
  EXPECT_NE(node["state_reason"].get<std::string>().find("core 0"), std::string::npos) << node.dump(2);

  // The retry avoids the node that hung and resumes from a checkpoint.
  const Json job = cluster.wait_job_state(id, "SUCCEEDED", 60s);
  EXPECT_EQ(job["infra_retries"], 1) << job.dump(2);
  const Json attempts = cluster.api("GET", path + "/attempts").body["attempts"];
  ASSERT_EQ(attempts.size(), 2u) << attempts.dump(2);
  for (const auto& n : attempts[1]["nodes"]) EXPECT_NE(n, victim);
  EXPECT_TRUE(attempts[1].contains("resumed_from")) << attempts.dump(2);
  EXPECT_EQ(attempts[1]["steps_completed"], 200);
}

}  // namespace
}  // namespace trainyard::testing

namespace trainyard::testing {
namespace {

TEST(Simulated, AJobWithNodesMinResumesOnFewerNodesWhenOneIsLost) {
  Cluster cluster;
  cluster.start_daemon();
  for (int i = 0; i < 3; ++i) cluster.start_agent("trn-" + std::to_string(i));
  cluster.wait_for_nodes(3);
  const auto id = cluster.submit({{"name", "elastic"},
                                  {"nodes", 3},
                                  {"nodes_min", 2},
                                  {"kind", "simulated"},
                                  {"workload", {{"steps", 60}, {"step_ms", 40}, {"checkpoint_every", 5}}}});
  const std::string path = "/v1/jobs/" + std::to_string(id);
  cluster.wait_job_state(id, "RUNNING", 30s);
  ASSERT_TRUE(eventually([&] { return cluster.api("GET", path + "/checkpoints").body["checkpoints"].size() >= 2; }, 30s));
  const std::string victim = cluster.api("GET", path + "/attempts").body["attempts"][0]["nodes"][2];
  cluster.stop_agent(victim, SIGKILL);

  cluster.wait_job_state(id, "SUCCEEDED", 60s);
  const Json attempts = cluster.api("GET", path + "/attempts").body["attempts"];
  ASSERT_EQ(attempts.size(), 2u) << attempts.dump(2);
  EXPECT_EQ(attempts[0]["nodes"].size(), 3u);
  EXPECT_EQ(attempts[1]["nodes"].size(), 2u) << "the retry waited for a third node instead of resuming on two";
  EXPECT_TRUE(attempts[1].contains("resumed_from")) << attempts.dump(2);
  EXPECT_EQ(attempts[1]["steps_completed"], 60);
  // The lost node cost goodput: steps redone after the checkpoint, the stalled first attempt.
  const Json goodput = cluster.api("GET", path).body["goodput"];
  EXPECT_GT(goodput["goodput"].get<double>(), 0.2) << goodput.dump(2);
  EXPECT_LT(goodput["goodput"].get<double>(), 1.0) << goodput.dump(2);
  EXPECT_GT(goodput["lost_core_s"]["stalled"].get<double>() + goodput["lost_core_s"]["redone"].get<double>(), 0)
      << goodput.dump(2);
  // Both attempts were pre-flight tested (multi-node); the second start, from the checkpoint, is lost
  // to restart (the first is the job's own start): each its own cause, with the attempts' times.
  EXPECT_GT(goodput["lost_core_s"]["preflight"].get<double>(), 0) << goodput.dump(2);
  EXPECT_GT(goodput["lost_core_s"]["restart"].get<double>(), 0) << goodput.dump(2);
  for (const auto& attempt : attempts) {
    EXPECT_TRUE(attempt.contains("launched_at") && attempt.contains("first_step_at")) << attempt.dump(2);
  }
  const Json cluster_view = cluster.api("GET", "/v1/goodput").body;
  EXPECT_EQ(cluster_view["jobs"].size(), 1u);
  EXPECT_DOUBLE_EQ(cluster_view["cluster"]["allocated_core_s"].get<double>(),
                   cluster_view["jobs"][0]["allocated_core_s"].get<double>());
}

}  // namespace
}  // namespace trainyard::testing
