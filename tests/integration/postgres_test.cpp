// The daemon on a PostgreSQL store (--store postgresql://...): what it acknowledged survives kill -9,
// and the job running across the restart finishes without a retry.
#include <signal.h>

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "tests/integration/cluster.h"
#include "tests/support/postgres_server.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

TEST(Postgres, TheDaemonRunsJobsOnPostgresAndKeepsThemAcrossKill9) {
  if (auto why = PostgresServer::unavailable()) GTEST_SKIP() << *why;
  PostgresServer server({});
  const std::vector<std::string> store = {"--store", server.fresh_store_url(), "--lease-ttl-ms", "1000"};
  Cluster cluster;
  cluster.start_daemon(store);
  cluster.start_agent("node-a");
  cluster.wait_for_nodes(1);

  const std::string gate = cluster.dir() + "/gate";
  const auto running = cluster.submit({{"name", "across-the-restart"},
                                       {"cores_per_node", 1},
                                       {"command", {{"argv", {"/bin/sh", "-c", "while [ ! -f " + gate + " ]; do sleep 0.05; done"}}}}});
  const auto done = cluster.submit({{"name", "done-before"}, {"cores_per_node", 1}, {"command", {{"argv", {"/bin/true"}}}}});
  std::map<std::int64_t, std::string> acknowledged;  // id -> name; pending: they need 2 nodes
  for (int i = 0; i < 50; ++i) {
    const Json spec = {{"name", "pending-" + std::to_string(i)},
                       {"nodes", 2},
                       {"wait_for_capacity", true},
                       {"command", {{"argv", {"/bin/true"}}}}};
    const auto r = cluster.api("POST", "/v1/jobs", spec.dump());
    ASSERT_EQ(r.status, 201) << r.body.dump();
    acknowledged[r.body["id"].get<std::int64_t>()] = spec["name"];
  }
  cluster.wait_job_state(running, "RUNNING", 20s);
  cluster.wait_job_state(done, "SUCCEEDED", 20s);

  cluster.kill_daemon(SIGKILL);
  cluster.start_daemon(store);
  // A standby (503) until the killed daemon's lease runs out (docs/DESIGN.md "Active and standby").
  ASSERT_TRUE(eventually([&] { return cluster.daemon_role() == "active"; }, 20s))
      << cluster.daemon_log();

  for (const auto& [id, name] : acknowledged) {
    const auto r = cluster.api("GET", "/v1/jobs/" + std::to_string(id));
    ASSERT_EQ(r.status, 200) << "job " << id << " was acknowledged but is gone";
    EXPECT_EQ(r.body["name"], name);
    EXPECT_EQ(r.body["state"], "PENDING") << id;
  }
  EXPECT_EQ(cluster.api("GET", "/v1/jobs/" + std::to_string(done)).body["state"], "SUCCEEDED");
  cluster.wait_for_nodes(1);
  { std::ofstream(gate) << "go"; }
  const Json job = cluster.wait_job_state(running, "SUCCEEDED", 20s);
  EXPECT_EQ(job["attempts"], 1) << job.dump(2);
  EXPECT_EQ(job["infra_retries"], 0) << job.dump(2);
}

}  // namespace
}  // namespace trainyard::testing
