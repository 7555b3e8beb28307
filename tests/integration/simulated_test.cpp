// The simulated Trainium kernel end to end: data-parallel training over real TCP collectives
// between agent processes, driven through the REST API.
#include <gtest/gtest.h>

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
}

}  // namespace
}  // namespace trainyard::testing
