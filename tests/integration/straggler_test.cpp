// Stragglers with real processes: one node's simulated device slows to a third of its speed after
// it registered (`node=slow:3`); its rank is named in a job.straggler event and on the attempt, its
// node stays in service until its health check, run once no attempt runs on it, times it slow
// against the other nodes and makes it SUSPECT, and with
// replace_stragglers the job is checkpointed and resumes without that node, at once on a warm spare
// when there is one. Command ranks that do not wait on each other show a slow one through their
// own progress.
#include <gtest/gtest.h>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

Json straggler_events(Cluster& c, std::int64_t id) {
  return c.api("GET", "/v1/events?type=job.straggler&job=" + std::to_string(id)).body["events"];
}

int rank_on(const Json& attempt, const std::string& node) {
  const Json& nodes = attempt["nodes"];
  for (std::size_t r = 0; r < nodes.size(); ++r) {
    if (nodes[r] == node) return static_cast<int>(r);
  }
  return -1;
}

Json gang_job(const std::string& name, int nodes, int steps) {
  return {{"name", name},
          {"nodes", nodes},
          {"kind", "simulated"},
          {"workload", {{"steps", steps}, {"step_ms", 50}, {"checkpoint_every", 5}}}};
}

void slow_down(Cluster& cluster, const std::string& node) {
  ASSERT_EQ(cluster.api("PUT", "/v1/nodes/" + node + "/faults", R"({"faults":["node=slow:3"]})").status, 202);
}

// It slows down once registered: its registration check, at full speed, lets it take work.
void start_gang(Cluster& cluster, int healthy) {
  cluster.start_daemon();
  cluster.start_agent("trn-slow", AgentSpec{.cores = 4});
  for (int i = 0; i < healthy; ++i) cluster.start_agent("trn-" + std::to_string(i));
  cluster.wait_for_nodes(healthy + 1);
  slow_down(cluster, "trn-slow");
}

TEST(Stragglers, ASlowNodesRankIsNamedAndItsNodeLeavesServiceOnlyByItsOwnCheck) {
  Cluster cluster;
  start_gang(cluster, 2);
  const auto id = cluster.submit(gang_job("gang", 3, 2000));
  cluster.wait_job_state(id, "RUNNING", 30s);

  ASSERT_TRUE(eventually([&] { return !straggler_events(cluster, id).empty(); }, 60s))
      << attempts_of(cluster, id).dump() << cluster.daemon_log();
  const Json events = straggler_events(cluster, id);
  ASSERT_EQ(events.size(), 1u) << events.dump(2);
  const Json& event = events[0];
  const Json attempt = attempts_of(cluster, id)[0];
  EXPECT_EQ(event["node"], "trn-slow") << event.dump(2);
  EXPECT_EQ(event["details"]["rank"], rank_on(attempt, "trn-slow")) << event.dump(2);
  // Paced at 3 x 50 ms against 50 ms; the all-reduce waits are not device time.
  EXPECT_GE(event["details"]["ratio"].get<double>(), 2.0) << event.dump(2);
  EXPECT_LE(event["details"]["ratio"].get<double>(), 3.5) << event.dump(2);
  EXPECT_EQ(event["details"]["replace"], false);
  ASSERT_EQ(attempt["stragglers"].size(), 1u) << attempt.dump(2);
  EXPECT_EQ(attempt["stragglers"][0]["node"], "trn-slow");

  // A job's pace alone takes no node out of service.
  EXPECT_EQ(cluster.api("GET", "/v1/nodes/trn-slow").body["state"], "HEALTHY");
  // Without replace_stragglers the job runs on where it is.
  EXPECT_EQ(attempts_of(cluster, id).size(), 1u);
  EXPECT_EQ(cluster.api("GET", job_path(id)).body["state"], "RUNNING");
  ASSERT_EQ(cluster.api("POST", job_path(id) + "/cancel").status, 200);
  cluster.wait_job_state(id, "CANCELLED", 30s);
  // Its node is health-checked once the attempt is over (the suite needs it idle): every core
  // computes right, and its GEMMs, timed against the other nodes', make it SUSPECT.
  Json check;
  ASSERT_TRUE(eventually([&] {
    const Json checks = cluster.api("GET", "/v1/nodes/trn-slow/health").body["checks"];
    for (const Json& c : checks) {
      if (c.value("kind", "") == "after_straggler") check = c;
    }
    return !check.is_null();
  }, 30s)) << cluster.api("GET", "/v1/nodes/trn-slow/health").body.dump(2);
  EXPECT_EQ(check["verdict"], "SUSPECT") << check.dump(2);
  EXPECT_NE(check["reason"].get<std::string>().find("the median of the other nodes"), std::string::npos) << check.dump(2);
  EXPECT_EQ(cluster.api("GET", "/v1/nodes/trn-slow").body["state"], "SUSPECT");
}

TEST(Stragglers, WithReplaceStragglersTheJobResumesFromItsCheckpointWithoutTheSlowNode) {
  Cluster cluster;
  start_gang(cluster, 2);
  Json spec = gang_job("replaced", 3, 200);
  spec["replace_stragglers"] = true;
  const auto id = cluster.submit(spec);
  cluster.wait_job_state(id, "RUNNING", 30s);
  cluster.start_agent("trn-2");  // where the job can go without the slow node

  const Json done = cluster.wait_job_state(id, "SUCCEEDED", 120s);
  const Json attempts = attempts_of(cluster, id);
  ASSERT_EQ(attempts.size(), 2u) << attempts.dump(2);
  EXPECT_EQ(attempts[0]["state"], "REQUEUED") << attempts.dump(2);
  EXPECT_EQ(attempts[0]["stragglers"][0]["node"], "trn-slow") << attempts.dump(2);
  EXPECT_EQ(rank_on(attempts[1], "trn-slow"), -1) << attempts.dump(2);
  EXPECT_FALSE(attempts[1].contains("stragglers")) << "ranks at one pace were named: " << attempts.dump(2);
  ASSERT_TRUE(attempts[1].contains("resumed_from")) << "not resumed from a checkpoint: " << attempts.dump(2);
  EXPECT_EQ(done["requeues"], 1) << done.dump(2);
  EXPECT_EQ(done["attempts"], 1) << "replacing a straggler used one of the job's attempts: " << done.dump(2);
  const Json events = straggler_events(cluster, id);
  ASSERT_EQ(events.size(), 1u) << events.dump(2);
  EXPECT_EQ(events[0]["details"]["replace"], true);
}

// With a warm spare the replaced straggler's job does not wait for a scheduling pass or a
// pre-flight: it resumes at once on its other ranks' nodes and the spare.
TEST(Stragglers, WithAWarmSpareTheReplacedStragglersJobResumesOnTheSpare) {
  Cluster cluster;
  cluster.start_daemon({"--warm-spares", "1"});
  for (int i = 0; i < 4; ++i) cluster.start_agent("trn-" + std::to_string(i));
  cluster.wait_for_nodes(4);
  Json spec = gang_job("spared", 3, 200);
  spec["replace_stragglers"] = true;
  const auto id = cluster.submit(spec);
  cluster.wait_job_state(id, "RUNNING", 30s);
  const Json first = attempts_of(cluster, id)[0];
  const std::string slow = first["nodes"][1];
  slow_down(cluster, slow);

  cluster.wait_job_state(id, "SUCCEEDED", 120s);
  const Json attempts = attempts_of(cluster, id);
  ASSERT_EQ(attempts.size(), 2u) << attempts.dump(2);
  EXPECT_EQ(attempts[0]["stragglers"][0]["node"], slow) << attempts.dump(2);
  const Json& resumed = attempts[1];
  EXPECT_EQ(rank_on(resumed, slow), -1) << attempts.dump(2);
  std::string spare;
  for (const Json& node : resumed["nodes"]) {
    if (rank_on(first, node) == -1) spare = node;
  }
  EXPECT_FALSE(spare.empty()) << "resumed on the same nodes without the slow one? " << attempts.dump(2);
  EXPECT_TRUE(resumed.contains("resumed_from")) << attempts.dump(2);
  EXPECT_NE(cluster.daemon_log().find("event=resume_on_spares job=" + std::to_string(id)), std::string::npos)
      << cluster.daemon_log();
}

// Command ranks that do not wait on each other: rank 1 steps every 150 ms, rank 0 every 50 ms.
TEST(Stragglers, ACommandRankShowsItsSlownessThroughItsProgress) {
  Cluster cluster;
  cluster.start_daemon();
  cluster.start_agent("trn-0");
  cluster.start_agent("trn-1");
  cluster.wait_for_nodes(2);
  const Json spec = {{"name", "paced"},
                     {"nodes", 2},
                     {"command",
                      {{"argv",
                        {"/bin/sh", "-c",
                         "pause=0.05; [ \"$RANK\" = 1 ] && pause=0.15; "
                         "i=0; while [ $i -lt 2000 ]; do i=$((i+1)); echo $i > \"$TRAINYARD_PROGRESS_FILE\"; "
                         "sleep $pause; done"}}}}};
  const auto id = cluster.submit(spec);
  cluster.wait_job_state(id, "RUNNING", 30s);
  ASSERT_TRUE(eventually([&] { return !straggler_events(cluster, id).empty(); }, 60s))
      << attempts_of(cluster, id).dump(2);
  const Json event = straggler_events(cluster, id)[0];
  EXPECT_EQ(event["details"]["rank"], 1) << "the faster rank was named: " << event.dump(2);
  EXPECT_EQ(event["node"], attempts_of(cluster, id)[0]["nodes"][1]) << event.dump(2);
  EXPECT_GE(event["details"]["ratio"].get<double>(), 1.5) << event.dump(2);
  ASSERT_EQ(cluster.api("POST", job_path(id) + "/cancel").status, 200);
  cluster.wait_job_state(id, "CANCELLED", 30s);
}

}  // namespace
}  // namespace trainyard::testing
