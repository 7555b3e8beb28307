#include "neuron/optimizer.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace trainyard::neuron {

double learning_rate(const WorkloadSpec& w, std::int64_t step) {
  if (step < w.warmup) return w.lr * static_cast<double>(step + 1) / static_cast<double>(w.warmup);
  const std::int64_t decay_steps = std::max<std::int64_t>(1, w.steps - 1 - w.warmup);
  const double progress = std::min(1.0, static_cast<double>(step - w.warmup) / static_cast<double>(decay_steps));
  return w.min_lr + 0.5 * (w.lr - w.min_lr) * (1.0 + std::cos(std::numbers::pi * progress));
}

double l2_norm(std::span<const float> values) {
  double sum = 0;
  for (float v : values) sum += static_cast<double>(v) * v;
  return std::sqrt(sum);
}

double clip_global_norm(std::span<float> grads, double max_norm) {
  const double norm = l2_norm(grads);
  if (norm > max_norm) {
    const auto scale = static_cast<float>(max_norm / (norm + 1e-6));
    for (float& g : grads) g *= scale;
  }
  return norm;
}

void adamw_update(std::span<float> params, std::span<const float> grads, std::span<float> m, std::span<float> v,
                  double lr, std::int64_t step, double weight_decay, const AdamWConfig& config) {
  const double correction1 = 1.0 - std::pow(config.beta1, static_cast<double>(step));
  const double correction2 = 1.0 - std::pow(config.beta2, static_cast<double>(step));
  const double decay = 1.0 - lr * weight_decay;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const double g = grads[i];
    const double m_i = config.beta1 * m[i] + (1.0 - config.beta1) * g;
    const double v_i = config.beta2 * v[i] + (1.0 - config.beta2) * g * g;
    m[i] = static_cast<float>(m_i);
    v[i] = static_cast<float>(v_i);
    const double update = (m_i / correction1) / (std::sqrt(v_i / correction2) + config.eps);
    params[i] = static_cast<float>(params[i] * decay - lr * update);
  }
}

}  // namespace trainyard::neuron
