#pragma once
// What GET /v1/jobs/{id}/metrics shows: a job's loss curve as the user thinks of it, however many
// attempts it took and however long it ran. Pure functions over stored rows.
//
// Design note: a retried job re-does the steps after its last checkpoint, so a step can have rows
// from several attempts; the kept trajectory takes each step from the newest attempt that reached
// it (the one whose weights the job went on with). Long runs are downsampled into consecutive
// buckets of equal step count, each reporting the mean and the extremes, so a spike or a NaN inside
// a bucket still shows (as Grafana's min/max bands do) instead of being averaged away. Spikes are
// listed separately and never downsampled: there are few, and each matters.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "proto/metrics.h"

namespace trainyard::daemon {

// `rows` ordered by step, then attempt id (Store::metrics_of). One row per step, in step order.
std::vector<MetricRecord> kept_trajectory(std::span<const MetricRecord> rows);

struct MetricPoint {
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
  AttemptId attempt_id = 0;  // of the bucket's last step
  // Means over the bucket's finite values (NaN when it has none); extremes of the loss and the
  // gradient norm; the count of non-finite losses, which a mean would hide.
  double loss = 0, loss_min = 0, loss_max = 0;
  double grad_norm = 0, grad_norm_max = 0;
  double param_norm = 0;  // at the last step
  double lr = 0;          // at the last step
  double samples_per_s = 0;
  int non_finite_losses = 0;
  int spikes = 0;  // spikes that started in the bucket
};

struct SpikeRecord {
  std::int64_t started_at_step = 0;
  std::optional<std::int64_t> steps_to_return;  // unset while the spike has not ended
};

struct MetricSeries {
  std::int64_t steps = 0;        // steps in the kept trajectory
  std::int64_t bucket_steps = 1;  // steps per point (1: not downsampled)
  std::vector<MetricPoint> points;
  std::vector<SpikeRecord> spikes;
};

// At most `max_points` (>= 1) points over the kept trajectory.
MetricSeries summarize_metrics(std::span<const MetricRecord> rows, std::int64_t max_points);

Json to_json(const MetricSeries& series);

}  // namespace trainyard::daemon
