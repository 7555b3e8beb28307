// The event log end to end (GET /v1/events): a job's life in order, and one user cannot read
// another's job events.
#include <gtest/gtest.h>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

// The types of job `id`'s events, oldest first, as `token` reads them.
std::vector<std::string> job_event_types(Cluster& cluster, std::int64_t id, const std::string& token = "") {
  const ApiResult r = cluster.api("GET", "/v1/events?type=job.*&job=" + std::to_string(id), "", token);
  EXPECT_EQ(r.status, 200) << r.body.dump();
  std::vector<std::string> types;
  for (const Json& e : r.body["events"]) types.push_back(e["type"]);
  return types;
}

TEST(Events, AJobsLifeIsSubmittedStartedSucceededAndOnlyItsOwnerReadsIt) {
  Cluster cluster;
  cluster.start_daemon();
  cluster.start_agent("node-a");
  cluster.wait_for_nodes(1);
  const std::string alice = cluster.api("POST", "/v1/tokens", R"({"user":"alice"})").body["token"];
  const std::string bob = cluster.api("POST", "/v1/tokens", R"({"user":"bob"})").body["token"];
  const std::int64_t id = cluster.submit(argv_job("life", {"/bin/true"}), alice);
  cluster.wait_job_state(id, "SUCCEEDED", 20s);
  EXPECT_EQ(job_event_types(cluster, id, alice), (std::vector<std::string>{"job.submitted", "job.started", "job.succeeded"}));

  const ApiResult seen_by_bob = cluster.api("GET", "/v1/events?limit=1000", "", bob);
  ASSERT_EQ(seen_by_bob.status, 200);
  bool cluster_events = false;
  for (const Json& e : seen_by_bob.body["events"]) {
    EXPECT_FALSE(e.contains("job") && e["job"] == id) << "bob read alice's job event " << e.dump();
    if (e["type"] == "node.registered") cluster_events = true;
  }
  EXPECT_TRUE(cluster_events) << "node events are the cluster's, readable by every user";
  EXPECT_TRUE(job_event_types(cluster, id, bob).empty());
  const ApiResult bad = cluster.api("GET", "/v1/events?type=nothing.*", "", bob);
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body["error"]["field"], "type");
}

}  // namespace
}  // namespace trainyard::testing
