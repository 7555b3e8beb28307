#include "daemon/telemetry/metric_series.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trainyard::daemon {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Mean of the finite values pushed; NaN when there were none.
class FiniteMean {
 public:
  void add(double v) {
    if (!std::isfinite(v)) return;
    sum_ += v;
    ++count_;
  }
  double value() const { return count_ == 0 ? kNaN : sum_ / static_cast<double>(count_); }

 private:
  double sum_ = 0;
  std::int64_t count_ = 0;
};

double finite_min(double a, double b) { return std::isfinite(b) && (!std::isfinite(a) || b < a) ? b : a; }
double finite_max(double a, double b) { return std::isfinite(b) && (!std::isfinite(a) || b > a) ? b : a; }

MetricPoint bucket_point(std::span<const MetricRecord> bucket) {
  MetricPoint p;
  p.first_step = bucket.front().metric.step;
  p.last_step = bucket.back().metric.step;
  p.attempt_id = bucket.back().attempt_id;
  p.param_norm = bucket.back().metric.param_norm;
  p.lr = bucket.back().metric.lr;
  p.loss_min = p.loss_max = p.grad_norm_max = kNaN;
  FiniteMean loss, grad_norm, samples_per_s;
  for (const MetricRecord& row : bucket) {
    const StepMetric& m = row.metric;
    loss.add(m.loss);
    grad_norm.add(m.grad_norm);
    samples_per_s.add(m.samples_per_s);
    p.loss_min = finite_min(p.loss_min, m.loss);
    p.loss_max = finite_max(p.loss_max, m.loss);
    p.grad_norm_max = finite_max(p.grad_norm_max, m.grad_norm);
    if (!std::isfinite(m.loss)) ++p.non_finite_losses;
    if (m.spike) ++p.spikes;
  }
  p.loss = loss.value();
  p.grad_norm = grad_norm.value();
  p.samples_per_s = samples_per_s.value();
  return p;
}

Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

}  // namespace

std::vector<MetricRecord> kept_trajectory(std::span<const MetricRecord> rows) {
  std::vector<MetricRecord> kept;
  kept.reserve(rows.size());
  for (const MetricRecord& row : rows) {
    // Rows of one step arrive in attempt order: the last one is the newest attempt's.
    if (!kept.empty() && kept.back().metric.step == row.metric.step) {
      kept.back() = row;
    } else {
      kept.push_back(row);
    }
  }
  return kept;
}

MetricSeries summarize_metrics(std::span<const MetricRecord> rows, std::int64_t max_points) {
  const std::vector<MetricRecord> kept = kept_trajectory(rows);
  MetricSeries series;
  series.steps = std::ssize(kept);
  const std::int64_t points = std::max<std::int64_t>(1, max_points);
  series.bucket_steps = std::max<std::int64_t>(1, (series.steps + points - 1) / points);
  for (std::int64_t start = 0; start < series.steps; start += series.bucket_steps) {
    const std::int64_t size = std::min(series.bucket_steps, series.steps - start);
    series.points.push_back(bucket_point(std::span(kept).subspan(static_cast<std::size_t>(start), static_cast<std::size_t>(size))));
  }
  for (const MetricRecord& row : kept) {
    const StepMetric& m = row.metric;
    if (m.spike) series.spikes.push_back(SpikeRecord{m.step, std::nullopt});
    if (m.spike_steps_to_return) {
      const std::int64_t started = m.step - *m.spike_steps_to_return;
      auto open = std::find_if(series.spikes.rbegin(), series.spikes.rend(),
                               [&](const SpikeRecord& s) { return s.started_at_step == started; });
      if (open != series.spikes.rend()) open->steps_to_return = m.spike_steps_to_return;
    }
  }
  return series;
}

Json to_json(const MetricSeries& series) {
  Json points = Json::array();
  for (const MetricPoint& p : series.points) {
    points.push_back({{"step", p.last_step},
                      {"first_step", p.first_step},
                      {"attempt_id", p.attempt_id},
                      {"loss", number_or_null(p.loss)},
                      {"loss_min", number_or_null(p.loss_min)},
                      {"loss_max", number_or_null(p.loss_max)},
                      {"grad_norm", number_or_null(p.grad_norm)},
                      {"grad_norm_max", number_or_null(p.grad_norm_max)},
                      {"param_norm", number_or_null(p.param_norm)},
                      {"lr", number_or_null(p.lr)},
                      {"samples_per_s", number_or_null(p.samples_per_s)},
                      {"non_finite_losses", p.non_finite_losses},
                      {"spikes", p.spikes}});
  }
  Json spikes = Json::array();
  for (const SpikeRecord& s : series.spikes) {
    spikes.push_back({{"started_at_step", s.started_at_step},
                      {"steps_to_return", s.steps_to_return ? Json(*s.steps_to_return) : Json(nullptr)}});
  }
  return {{"steps", series.steps}, {"bucket_steps", series.bucket_steps}, {"points", points}, {"spikes", spikes}};
}

}  // namespace trainyard::daemon
