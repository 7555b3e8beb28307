#pragma once
// The device part of the accelerator suite's three per-core tests (healthcheck/accelerator_checks.h
// explains each test and judges what comes back): drive one NeuronCore of the simulated device with
// known inputs and hand its outputs to the pure assessment.
#include <cstddef>
#include <cstdint>
#include <stop_token>
#include <vector>

#include "healthcheck/accelerator_checks.h"
#include "neuron/device.h"

namespace trainyard::agent {

// Each throws what the core throws: CoreCrashed, OperationCancelled.
healthcheck::Assessment run_gemm_test(neuron::NeuronCore& core, int size, std::uint64_t seed, std::stop_token stop);
healthcheck::Assessment run_stochastic_rounding_test(neuron::NeuronCore& core, std::size_t samples,
                                                double false_alarm_probability, std::uint64_t seed,
                                                std::stop_token stop);
// Times one size x size GEMM at a time on a core, on seeded operands made once: the core's speed,
// which the daemon compares with its other cores' and with other nodes' (healthcheck/verdict.h).
// The suite interleaves the cores' timings (accelerator_suite.cpp says why).
class GemmTimer {
 public:
  GemmTimer(neuron::NeuronCore& core, int size, std::uint64_t seed);
  // The ms one GEMM took; throws what the core throws.
  double time_one(std::stop_token stop);

 private:
  neuron::NeuronCore* core_;
  int size_;
  std::vector<float> a_, b_, out_;
};
healthcheck::Assessment run_memory_test(neuron::NeuronCore& core, std::size_t words, std::stop_token stop);

}  // namespace trainyard::agent
