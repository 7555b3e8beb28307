#pragma once
// The accelerator sanity suite (DESIGN.md "Health"), run by the agent on every core of its device:
// the GEMM, stochastic-rounding and memory tests of accelerator_checks.h, each under its own time
// budget (watchdog.h), so a hung core shows up as `timed_out` after its budget rather than hanging
// the suite. A core that crashes or times out is not given its remaining tests (`skipped`).
// A test that completes but over its budget is `timed_out` too: a core that slow is not healthy.
//
// Cores are tested concurrently by `parallel_cores` threads: real NeuronCores are independent, and
// on the simulated device it keeps a hung core from delaying the others.
//
// Threading contract: the suite uses the device's cores exclusively while it runs (no attempt may be
// using them); `set_faults` may still be called from elsewhere.
#include <chrono>
#include <cstdint>

#include "agent/neuron/device.h"
#include "healthcheck/results.h"

namespace trainyard::health {

struct AcceleratorSuiteOptions {
  std::chrono::milliseconds budget{2000};  // per test, per core
  int gemm_size = 64;
  std::size_t rounding_samples = std::size_t{1} << 16;
  double false_alarm_probability = 1e-9;   // of the rounding bias test on a healthy core
  std::size_t memory_words = std::size_t{1} << 16;
  int parallel_cores = 0;                  // 0: one per hardware thread
  std::uint64_t seed = 1;
  bool operator==(const AcceleratorSuiteOptions&) const = default;
};

AcceleratorReport run_accelerator_suite(neuron::NeuronDevice& device, const AcceleratorSuiteOptions& options);

}  // namespace trainyard::health
