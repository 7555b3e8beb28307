// GET /v1/cluster/history over samples the ClusterSampler stored.
#include <gtest/gtest.h>

#include "daemon/cluster_sampler.h"
#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

using std::chrono::seconds;

class ApiHistoryTest : public ApiTest {
 protected:
  ApiHistoryTest() { tick(); }  // the sampler's first tick only starts its interval

  void tick() {
    sampler.tick(cluster.clock.system_now(), cluster.clock.monotonic_now());
    cluster.settle();
  }
  // `samples` intervals pass, and the sampler stores one sample at the end of each.
  void sample(int samples) {
    for (int i = 0; i < samples; ++i) {
      cluster.advance(seconds(60));
      tick();
    }
  }

  DaemonMetrics metrics;
  ClusterSampler sampler{cluster.worker, cluster.jobs, metrics, seconds(60)};
};

TEST_F(ApiHistoryTest, AnswersTheStoredSamplesInBucketsWithTheCoresAndQueueOfEach) {
  cluster.connect("node-a", 8);
  cluster.connect("node-b", 4);
  submit_as(kAlice);
  sample(3);
  const Reply r = call("GET", "/v1/cluster/history?window=1h", kAdmin);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["window_s"], 3600);
  EXPECT_EQ(r.body["bucket_s"], 60);
  EXPECT_EQ(r.body["sample_interval_s"], 60) << "the Api's default until the daemon sets it";
  EXPECT_EQ(r.body["activity"], true);
  const Json& buckets = r.body["buckets"];
  ASSERT_EQ(buckets.size(), 3u) << "one sample a minute: " << buckets.dump();
  for (const Json& b : buckets) {
    EXPECT_EQ(b["total_cores"], 12.0);
    EXPECT_EQ(b["usable_cores"], 12.0);
    EXPECT_EQ(b["running_jobs"], 1.0) << b.dump();
    EXPECT_EQ(b["pending_jobs"], 0.0);
    EXPECT_EQ(b["allocated_cores"], 4.0) << "the job holds the whole of the node it fits best, node-b";
  }
}

TEST_F(ApiHistoryTest, UsersSeeTheGaugesButNotOtherUsersAttemptsOrGoodput) {
  cluster.connect("node-a", 8);
  sample(1);
  const Reply r = call("GET", "/v1/cluster/history?window=1h", kAlice);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["activity"], false);
  ASSERT_EQ(r.body["buckets"].size(), 1u);
  EXPECT_EQ(r.body["buckets"][0]["total_cores"], 8.0);
  EXPECT_FALSE(r.body["buckets"][0].contains("failed_attempts"));
  const Reply viewer = call("GET", "/v1/cluster/history?window=1h", kViewer);
  EXPECT_EQ(viewer.body["activity"], true) << "a viewer reads every job";
}

TEST_F(ApiHistoryTest, AWindowBeyondSevenDaysOrNotInHoursOrDaysIsRefusedNamingIt) {
  for (const char* window : {"8d", "169h", "0h", "24", "1w", "-1h"}) {
    const Reply r = call("GET", std::string("/v1/cluster/history?window=") + window, kAdmin);
    EXPECT_EQ(r.status, 400) << window;
    EXPECT_EQ(r.error_field(), "window") << window;
  }
  EXPECT_EQ(call("GET", "/v1/cluster/history?window=7d", kAdmin).status, 200);
  EXPECT_EQ(call("GET", "/v1/cluster/history", kAdmin).body["window_s"], 24 * 3600) << "24h by default";
}

TEST_F(ApiHistoryTest, SamplesOlderThanTheRetentionAreDeletedAsNewOnesAreStored) {
  sample(1);
  ASSERT_EQ(cluster.memory.cluster_samples_since(TimePoint{}).size(), 1u);
  cluster.advance(kClusterHistoryKept);
  sample(1);
  const auto kept = cluster.memory.cluster_samples_since(TimePoint{});
  ASSERT_EQ(kept.size(), 1u) << "the first sample is past the retention";
  EXPECT_EQ(kept[0].at, cluster.clock.system_now());
}

}  // namespace
}  // namespace trainyard::daemon::testing
