#pragma once
// The optimisation step of the kernel, as the large-model recipes the design cites do it:
// - learning rate: linear warm-up over `warmup` steps to `lr`, then a cosine decay to `min_lr`
//   at the last step (step numbers are 0-based);
// - gradient clipping by the global L2 norm to 1.0 (PyTorch's clip_grad_norm_: scale by
//   max_norm / (norm + 1e-6) when the norm exceeds max_norm);
// - AdamW (Loshchilov & Hutter; PyTorch's order): w *= 1 - lr * wd, then
//   w -= lr * m_hat / (sqrt(v_hat) + eps), with bias-corrected moments. Arithmetic in double, the
//   result stored as float (the caller rounds it to bf16 when the precision says so).
#include <cstdint>
#include <span>

#include "proto/job.h"

namespace trainyard::neuron {

struct AdamWConfig {
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-5;
  double weight_decay = 0.1;
};

double learning_rate(const WorkloadSpec& w, std::int64_t step);

double l2_norm(std::span<const float> values);

// Clips in place to `max_norm`; returns the norm before clipping.
double clip_global_norm(std::span<float> grads, double max_norm);

// One AdamW update of a parameter segment. `step` counts updates from 1 (bias correction);
// `weight_decay` is per segment because biases are not decayed.
void adamw_update(std::span<float> params, std::span<const float> grads, std::span<float> m, std::span<float> v,
                  double lr, std::int64_t step, double weight_decay, const AdamWConfig& config = {});

}  // namespace trainyard::neuron
