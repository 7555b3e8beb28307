#pragma once
// Gradient-norm spike detection. The baseline is the running mean of the last 20 gradient norms
// (the window must be full, so the noisy first steps do not count). A step whose norm exceeds
// mean + threshold starts a spike; the spike ends at the first later step whose norm is back at or
// below the level that triggered it, and the number of steps that took is reported. Spiking norms
// enter the window like any other, as they do in the running mean operators watch.
#include <cstdint>
#include <deque>
#include <optional>

namespace trainyard::neuron {

struct SpikeObservation {
  bool spike_started = false;
  std::optional<std::int64_t> steps_to_return;  // set on the step that ends a spike
};

class SpikeDetector {
 public:
  static constexpr std::size_t kWindow = 20;

  explicit SpikeDetector(double threshold) : threshold_(threshold) {}
  SpikeObservation observe(std::int64_t step, double grad_norm);
  bool in_spike() const { return spike_start_.has_value(); }

 private:
  double threshold_;
  std::deque<double> window_;
  std::optional<std::int64_t> spike_start_;
  double return_level_ = 0;
};

}  // namespace trainyard::neuron
