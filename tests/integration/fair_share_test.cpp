// Fair share on real agents: two always-backlogged shares with weights 2:1 split core-time 2:1,
// as GET /v1/shares reports it.
#include <gtest/gtest.h>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

TEST(FairShare, TwoBackloggedSharesSplitCoreTimeByWeight) {
  Cluster cluster;
  cluster.start_daemon();
  cluster.start_agent("node-a");
  cluster.start_agent("node-b");
  cluster.wait_for_nodes(2);
  ASSERT_EQ(cluster.api("PUT", "/v1/shares/heavy", R"({"weight":2})").status, 200);
  ASSERT_EQ(cluster.api("PUT", "/v1/shares/light", R"({"weight":1})").status, 200);
  // Same-sized jobs: 2 cores for ~0.3 s, on 2 nodes x 4 cores = 4 at a time.
  auto job = [](const std::string& share, int i) {
    return Json{{"name", share + "-" + std::to_string(i)},
                {"share", share},
                {"cores_per_node", 2},
                {"timeout_s", 30},
                {"command", {{"argv", {"/bin/sh", "-c", "sleep 0.3"}}}}};
  };
  for (int i = 0; i < 60; ++i) {
    cluster.submit(job("light", i));
    cluster.submit(job("heavy", i));
  }
  // Measure while both shares still have a backlog.
  int done = 0;
  ASSERT_TRUE(eventually(
      [&] {
        done = static_cast<int>(cluster.api("GET", "/v1/jobs?state=SUCCEEDED&limit=1000").body["jobs"].size());
        return done >= 36;
      },
      120s));
  const auto shares = cluster.api("GET", "/v1/shares");
  ASSERT_EQ(shares.status, 200);
  double heavy = 0, light = 0;
  for (const auto& s : shares.body["shares"]) {
    // Core-seconds actually used (the expected usage of running jobs is only an advance charge).
    const double core_s = s["usage_core_s"].get<double>();
    if (s["name"] == "heavy") heavy = core_s;
    if (s["name"] == "light") light = core_s;
    if (s["name"] == "heavy" || s["name"] == "light") {
      EXPECT_GT(s["pending_jobs"].get<int>(), 0) << s.dump();
    }
  }
  ASSERT_GT(light, 0);
  // Whole jobs are the unit of sharing, so allow a few jobs' worth of slack around 2:1.
  EXPECT_NEAR(heavy / light, 2.0, 0.3) << "heavy " << heavy << " core-s, light " << light << " core-s after " << done
                                        << " jobs; " << shares.body.dump();
}

}  // namespace
}  // namespace trainyard::testing
