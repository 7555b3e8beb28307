#include "daemon/policy/straggler_rule.h"

#include <algorithm>

namespace trainyard::daemon {

std::optional<double> StragglerWatch::observe(std::size_t rank, std::int64_t step, Millis work, bool slow_phase) {
  if (rank >= ranks_.size()) return std::nullopt;
  Rank& r = ranks_[rank];
  if (!r.window_step || step < *r.window_step || work < r.window_work) {
    r.window_step = step;
    r.window_work = work;
    r.window_slow_phase = slow_phase;
    return std::nullopt;
  }
  r.window_slow_phase = r.window_slow_phase || slow_phase;
  const std::int64_t steps = step - *r.window_step;
  const Millis spent = work - r.window_work;
  if (steps < kStragglerWindowSteps || spent < kStragglerWindowWork) return std::nullopt;
  const bool judged = !r.window_slow_phase;
  r.window_step = step;
  r.window_work = work;
  r.window_slow_phase = false;
  if (!judged) return std::nullopt;
  return judge(rank, static_cast<double>(spent.count()) / static_cast<double>(steps));
}

std::optional<double> StragglerWatch::judge(std::size_t rank, double per_step) {
  Rank& r = ranks_[rank];
  r.latest = per_step;
  std::vector<double> others;
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    if (i != rank && ranks_[i].latest) others.push_back(*ranks_[i].latest);
  }
  if (others.empty()) return std::nullopt;
  const auto middle = others.begin() + static_cast<std::ptrdiff_t>(others.size() / 2);
  std::nth_element(others.begin(), middle, others.end());
  double median = *middle;
  if (others.size() % 2 == 0) median = (median + *std::max_element(others.begin(), middle)) / 2;
  const double ratio = median > 0 ? per_step / median : 0;
  if (ratio < kStragglerRatio) {
    r.slow_windows = 0;
    r.ratio_sum = 0;
    return std::nullopt;
  }
  ++r.slow_windows;
  r.ratio_sum += ratio;
  if (r.slow_windows < kStragglerWindows || r.named) return std::nullopt;
  r.named = true;
  return r.ratio_sum / r.slow_windows;
}

}  // namespace trainyard::daemon
