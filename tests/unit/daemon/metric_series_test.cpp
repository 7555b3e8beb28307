#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "daemon/telemetry/metric_series.h"

namespace trainyard::daemon {
namespace {

MetricRecord row(AttemptId attempt, std::int64_t step, double loss, double grad_norm = 1.0) {
  return MetricRecord{1, attempt, StepMetric{step, loss, grad_norm, 10.0 + step, 1e-3 * step, 100.0, false, std::nullopt}};
}

TEST(KeptTrajectory, TakesEachStepFromTheNewestAttemptThatReachedIt) {
  // Attempt 1 reached step 4; attempt 2 resumed from the checkpoint at step 2 and re-did 3 and 4.
  const std::vector<MetricRecord> rows = {row(1, 1, 5), row(1, 2, 4), row(1, 3, 3.5), row(2, 3, 3.4),
                                          row(1, 4, 3.2), row(2, 4, 3.1), row(2, 5, 3.0)};
  const auto kept = kept_trajectory(rows);
  ASSERT_EQ(kept.size(), 5u);
  EXPECT_EQ(kept[2].attempt_id, 2);
  EXPECT_EQ(kept[2].metric.loss, 3.4);
  EXPECT_EQ(kept[3].metric.loss, 3.1);
  EXPECT_EQ(kept[4].metric.step, 5);
}

TEST(SummarizeMetrics, ShortRunsKeepEveryStep) {
  const std::vector<MetricRecord> rows = {row(1, 1, 2.0), row(1, 2, 1.5), row(1, 3, 1.0)};
  const MetricSeries s = summarize_metrics(rows, 500);
  EXPECT_EQ(s.steps, 3);
  EXPECT_EQ(s.bucket_steps, 1);
  ASSERT_EQ(s.points.size(), 3u);
  EXPECT_EQ(s.points[1].first_step, 2);
  EXPECT_EQ(s.points[1].last_step, 2);
  EXPECT_EQ(s.points[1].loss, 1.5);
  EXPECT_EQ(s.points[1].loss_min, 1.5);
  EXPECT_EQ(s.points[1].param_norm, 12.0);
}

TEST(SummarizeMetrics, BucketsKeepExtremesAndCountNonFiniteLosses) {
  std::vector<MetricRecord> rows;
  for (int step = 1; step <= 7; ++step) rows.push_back(row(1, step, step, step * 0.5));
  rows[4].metric.loss = std::numeric_limits<double>::quiet_NaN();  // step 5
  rows[5].metric.grad_norm = 40.0;                                 // step 6
  const MetricSeries s = summarize_metrics(rows, 3);
  EXPECT_EQ(s.bucket_steps, 3);
  ASSERT_EQ(s.points.size(), 3u);  // steps 1-3, 4-6, 7
  EXPECT_DOUBLE_EQ(s.points[0].loss, 2.0);
  EXPECT_EQ(s.points[0].loss_min, 1.0);
  EXPECT_EQ(s.points[0].loss_max, 3.0);
  EXPECT_EQ(s.points[1].first_step, 4);
  EXPECT_EQ(s.points[1].last_step, 6);
  EXPECT_DOUBLE_EQ(s.points[1].loss, 5.0) << "the mean of the finite losses 4 and 6";
  EXPECT_EQ(s.points[1].non_finite_losses, 1);
  EXPECT_EQ(s.points[1].grad_norm_max, 40.0);
  EXPECT_EQ(s.points[1].param_norm, 16.0) << "the last step's";
  EXPECT_EQ(s.points[2].first_step, 7);
  EXPECT_EQ(s.points[2].last_step, 7);
}

TEST(SummarizeMetrics, ABucketOfOnlyNaNHasNoMean) {
  std::vector<MetricRecord> rows = {row(1, 1, std::numeric_limits<double>::quiet_NaN())};
  const MetricSeries s = summarize_metrics(rows, 10);
  ASSERT_EQ(s.points.size(), 1u);
  EXPECT_TRUE(std::isnan(s.points[0].loss));
  EXPECT_TRUE(std::isnan(s.points[0].loss_min));
  const Json j = to_json(s);
  EXPECT_TRUE(j["points"][0]["loss"].is_null()) << j.dump();
}

TEST(SummarizeMetrics, SpikesAreListedWhole) {
  std::vector<MetricRecord> rows;
  for (int step = 1; step <= 30; ++step) rows.push_back(row(1, step, 1.0));
  rows[9].metric.spike = true;                   // step 10 starts a spike...
  rows[12].metric.spike_steps_to_return = 3;     // ...that ends at step 13
  rows[24].metric.spike = true;                  // step 25 starts one that has not ended
  const MetricSeries s = summarize_metrics(rows, 2);
  ASSERT_EQ(s.spikes.size(), 2u);
  EXPECT_EQ(s.spikes[0].started_at_step, 10);
  EXPECT_EQ(s.spikes[0].steps_to_return, 3);
  EXPECT_EQ(s.spikes[1].started_at_step, 25);
  EXPECT_FALSE(s.spikes[1].steps_to_return);
  EXPECT_EQ(s.points[0].spikes, 1);
  EXPECT_EQ(s.points[1].spikes, 1);
}

TEST(SummarizeMetrics, AHundredThousandStepRunComesBackAsAtMostMaxPointsWithItsSpikeAndResume) {
  // Attempt 1 ran to step 61,000; attempt 2 resumed from the checkpoint at 60,000 and finished
  // 100,000 steps. One step's loss jumped to 1,000: the chart must still show it.
  std::vector<MetricRecord> rows;
  for (int step = 1; step <= 61'000; ++step) rows.push_back(row(1, step, 2.0));
  for (int step = 60'001; step <= 100'000; ++step) rows.push_back(row(2, step, step == 77'777 ? 1000.0 : 1.5));
  std::stable_sort(rows.begin(), rows.end(), [](const MetricRecord& a, const MetricRecord& b) {
    return a.metric.step < b.metric.step;  // Store::metrics_of's order: step, then attempt
  });
  const MetricSeries s = summarize_metrics(rows, 500);
  EXPECT_EQ(s.steps, 100'000);
  EXPECT_EQ(s.bucket_steps, 200);
  ASSERT_EQ(s.points.size(), 500u);
  const MetricPoint& spiked = s.points[77'777 / 200];
  EXPECT_LE(spiked.first_step, 77'777);
  EXPECT_GE(spiked.last_step, 77'777);
  EXPECT_EQ(spiked.loss_max, 1000.0);
  EXPECT_EQ(spiked.loss_min, 1.5);
  // The kept trajectory switches to attempt 2 where it resumed: steps 60,001 on are attempt 2's.
  EXPECT_EQ(s.points[299].attempt_id, 1);  // steps 59,801-60,000
  EXPECT_EQ(s.points[300].attempt_id, 2);
  EXPECT_EQ(s.points[300].loss, 1.5);
}

TEST(SummarizeMetrics, NoRowsNoPoints) {
  const MetricSeries s = summarize_metrics({}, 10);
  EXPECT_EQ(s.steps, 0);
  EXPECT_TRUE(s.points.empty());
}

}  // namespace
}  // namespace trainyard::daemon
