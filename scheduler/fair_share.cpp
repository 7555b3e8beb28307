#include "scheduler/fair_share.h"

#include <cmath>

#include "proto/seconds.h"

namespace trainyard::scheduler {

double decay_factor(Millis elapsed, Millis half_life) {
  return std::exp2(-in_seconds(elapsed) / in_seconds(half_life));
}

double decayed_usage(double usage, int cores, Millis elapsed, Millis half_life) {
  if (elapsed <= Millis::zero()) return usage;
  const double rate = std::log(2.0) / in_seconds(half_life);
  // -expm1 keeps precision when `elapsed` is tiny next to the half-life.
  const double kept = std::exp(-rate * in_seconds(elapsed));
  const double accrued = static_cast<double>(cores) * -std::expm1(-rate * in_seconds(elapsed)) / rate;
  return usage * kept + accrued;
}

double fair_share_factor(double usage, double total_usage, double weight, double active_weight) {
  if (total_usage <= 0 || active_weight <= 0) return 1.0;
  const double u = usage / total_usage;
  const double s = weight / active_weight;
  return std::exp2(-u / s);
}

}  // namespace trainyard::scheduler
