#include "neuron/spike_detector.h"

#include <numeric>

namespace trainyard::neuron {

SpikeObservation SpikeDetector::observe(std::int64_t step, double grad_norm) {
  SpikeObservation result;
  if (spike_start_) {
    if (grad_norm <= return_level_) {
      result.steps_to_return = step - *spike_start_;
      spike_start_.reset();
    }
  } else if (window_.size() == kWindow) {
    const double mean = std::accumulate(window_.begin(), window_.end(), 0.0) / static_cast<double>(kWindow);
    const double level = mean + threshold_;
    if (grad_norm > level) {
      result.spike_started = true;
      spike_start_ = step;
      return_level_ = level;
    }
  }
  window_.push_back(grad_norm);
  if (window_.size() > kWindow) window_.pop_front();
  return result;
}

}  // namespace trainyard::neuron
