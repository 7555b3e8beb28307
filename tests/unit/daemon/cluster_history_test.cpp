// The cluster's history: samples from live state and counter totals, and their buckets.
#include "daemon/cluster_history.h"

#include <gtest/gtest.h>

namespace trainyard::daemon {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

const TimePoint kT0 = from_unix_ms(1'764'000'000'000);  // a whole hour (and day) since the epoch

NodeView node(std::string name, int cores, int used, NodeState state, bool connected = true) {
  NodeView view;
  view.node.name = std::move(name);
  view.node.cores = cores;
  view.node.state = state;
  view.node.connected = connected;
  view.free_cores = cores - used;
  return view;
}

Job job_in(JobId id, JobState state) {
  Job j;
  j.id = id;
  j.state = state;
  return j;
}

ClusterSample sample_at(TimePoint at, int allocated, int pending = 0) {
  ClusterSample s;
  s.at = at;
  s.gauges = {.total_cores = 16, .usable_cores = 8, .allocated_cores = allocated, .pending_jobs = pending};
  return s;
}

TEST(ClusterHistory, UsableCoresAreThoseOfConnectedHealthyNodesAndAllocatedOnesCountOnEveryNode) {
  const std::vector<NodeView> nodes = {node("a", 8, 3, NodeState::healthy), node("b", 8, 8, NodeState::unhealthy),
                                       node("c", 4, 0, NodeState::healthy, false), node("d", 2, 0, NodeState::drained)};
  const std::map<JobId, Job> jobs = {{1, job_in(1, JobState::pending)}, {2, job_in(2, JobState::pending)},
                                     {3, job_in(3, JobState::starting)}, {4, job_in(4, JobState::running)}};
  const ClusterGauges g = cluster_gauges(nodes, jobs);
  EXPECT_EQ(g.total_cores, 22);
  EXPECT_EQ(g.usable_cores, 8) << "not the unhealthy, the disconnected or the drained node's";
  EXPECT_EQ(g.allocated_cores, 11) << "the unhealthy node's running job holds its cores too";
  EXPECT_EQ(g.pending_jobs, 2);
  EXPECT_EQ(g.running_jobs, 2) << "STARTING and RUNNING";
}

TEST(ClusterHistory, ASampleCountsWhatHappenedSinceTheOneBefore) {
  const ActivityTotals before{.started_attempts = 5, .failed_attempts = {{"user_error", 2}},
                              .ended_core_s = 100, .productive_core_s = 90};
  const ActivityTotals now{.started_attempts = 8, .failed_attempts = {{"user_error", 2}, {"out_of_memory", 1}},
                           .ended_core_s = 160, .productive_core_s = 130};
  const ClusterSample s = take_sample(kT0, ClusterGauges{.total_cores = 4}, now, before);
  EXPECT_EQ(s.at, kT0);
  EXPECT_EQ(s.gauges.total_cores, 4);
  EXPECT_EQ(s.started_attempts, 3);
  EXPECT_EQ(s.failed_attempts, (std::map<std::string, std::int64_t>{{"out_of_memory", 1}}))
      << "a class with no new failures is left out";
  EXPECT_DOUBLE_EQ(s.ended_core_s, 60);
  EXPECT_DOUBLE_EQ(s.productive_core_s, 40);
}

TEST(ClusterHistory, ASampleRoundTripsThroughItsStoredRecordAndADamagedOneIsRefused) {
  ClusterSample s = sample_at(kT0, 5, 3);
  s.gauges.running_jobs = 2;
  s.started_attempts = 4;
  s.failed_attempts = {{"hang", 1}};
  s.ended_core_s = 12.5;
  s.productive_core_s = 10;
  std::optional<ClusterSample> back = cluster_sample_from_json(to_json(s));
  ASSERT_TRUE(back);
  back->at = s.at;  // the time is the row's key, not part of the record
  EXPECT_EQ(*back, s);
  Json damaged = to_json(s);
  damaged["allocated_cores"] = "five";
  EXPECT_FALSE(cluster_sample_from_json(damaged));
  EXPECT_FALSE(cluster_sample_from_json(Json::object()));
}

TEST(ClusterHistory, BucketsAreRoundSizesThatKeepAWindowUnderThreeHundredAndHoldASample) {
  EXPECT_EQ(history_bucket(hours(24), seconds(60)), minutes(5));
  EXPECT_EQ(history_bucket(hours(24 * 7), seconds(60)), hours(1));
  EXPECT_EQ(history_bucket(hours(1), seconds(60)), minutes(1));
  EXPECT_EQ(history_bucket(hours(1), seconds(1)), seconds(30)) << "3600 / 300 = 12 s: the next round size";
  EXPECT_EQ(history_bucket(hours(1), seconds(0)), seconds(30)) << "history off: the window alone decides";
  EXPECT_EQ(history_bucket(hours(1), seconds(600)), minutes(10)) << "no bucket shorter than a sample interval";
  EXPECT_EQ(history_bucket(hours(1), seconds(3600)), hours(1));
}

TEST(ClusterHistory, SamplesFoldIntoAlignedBucketsWithMeansSumsAndGoodputAndGapsStayGaps) {
  std::vector<ClusterSample> samples = {sample_at(kT0 + minutes(1), 2, 1), sample_at(kT0 + minutes(3), 6, 5),
                                        // 5:00 - 9:59 has no samples: the daemon was down
                                        sample_at(kT0 + minutes(10), 8, 0)};
  samples[0].started_attempts = 2;
  samples[0].failed_attempts = {{"user_error", 1}};
  samples[1].failed_attempts = {{"user_error", 2}, {"hang", 1}};
  samples[1].ended_core_s = 100;
  samples[1].productive_core_s = 75;
  const Json body = history_body(samples, kT0, kT0 + hours(1), minutes(5), seconds(60), true);
  EXPECT_EQ(body["window_s"], 3600);
  EXPECT_EQ(body["bucket_s"], 300);
  EXPECT_EQ(body["sample_interval_s"], 60);
  EXPECT_EQ(body["activity"], true);
  const Json& buckets = body["buckets"];
  ASSERT_EQ(buckets.size(), 2u) << buckets.dump();
  EXPECT_EQ(buckets[0]["at"], format_time(kT0));
  EXPECT_EQ(buckets[0]["samples"], 2);
  EXPECT_DOUBLE_EQ(buckets[0]["allocated_cores"].get<double>(), 4);
  EXPECT_DOUBLE_EQ(buckets[0]["pending_jobs"].get<double>(), 3);
  EXPECT_EQ(buckets[0]["pending_jobs_max"], 5);
  EXPECT_EQ(buckets[0]["started_attempts"], 2);
  EXPECT_EQ(buckets[0]["failed_attempts"], (Json{{"user_error", 3}, {"hang", 1}}));
  EXPECT_DOUBLE_EQ(buckets[0]["goodput"].get<double>(), 0.75);
  EXPECT_EQ(buckets[1]["at"], format_time(kT0 + minutes(10))) << "the empty 5-minute bucket is left out";
  EXPECT_TRUE(buckets[1]["goodput"].is_null()) << "nothing ended in it";
}

TEST(ClusterHistory, WithoutActivityBucketsCarryTheGaugesOnly) {
  ClusterSample s = sample_at(kT0, 3);
  s.failed_attempts = {{"user_error", 1}};
  s.ended_core_s = 10;
  const Json body = history_body(std::vector{s}, kT0, kT0 + hours(1), minutes(5), seconds(60), false);
  EXPECT_EQ(body["activity"], false);
  const Json& bucket = body["buckets"].at(0);
  EXPECT_EQ(bucket["allocated_cores"], 3.0);
  for (const char* hidden : {"started_attempts", "failed_attempts", "ended_core_s", "productive_core_s", "goodput"}) {
    EXPECT_FALSE(bucket.contains(hidden)) << hidden;
  }
}

TEST(ClusterHistory, SamplesOutsideTheWindowAreLeftOut) {
  const std::vector<ClusterSample> samples = {sample_at(kT0 - seconds(1), 1), sample_at(kT0, 2),
                                              sample_at(kT0 + hours(1) + seconds(1), 3)};
  const Json body = history_body(samples, kT0, kT0 + hours(1), minutes(5), seconds(60), true);
  ASSERT_EQ(body["buckets"].size(), 1u);
  EXPECT_EQ(body["buckets"][0]["allocated_cores"], 2.0);
}

}  // namespace
}  // namespace trainyard::daemon
