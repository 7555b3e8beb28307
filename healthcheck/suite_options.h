#pragma once
// What the daemon asks of each health suite (docs/DESIGN.md "Health checks"), sent to the agent with the
// request (codecs in health_json.h). The suites themselves drive the simulated device, so they run
// in the agent (agent/accelerator_suite.h, agent/collective_suite.h); the options are plain data.
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace trainyard::healthcheck {

struct AcceleratorSuiteOptions {
  std::chrono::milliseconds budget{2000};  // per test, per core
  int gemm_size = 64;
  std::size_t rounding_samples = std::size_t{1} << 16;
  double false_alarm_probability = 1e-9;   // of the rounding bias test on a healthy core
  std::size_t memory_words = std::size_t{1} << 16;
  int parallel_cores = 0;                  // 0: one per hardware thread
  int timing_repeats = 32;                 // GEMMs timed per core for its speed (CoreResult::gemm_ms)
  std::uint64_t seed = 1;
  bool operator==(const AcceleratorSuiteOptions&) const = default;
};

struct CollectiveSuiteOptions {
  std::size_t elements = std::size_t{1} << 18;  // 1 MiB of fp32 per collective
  int iterations = 3;
  bool operator==(const CollectiveSuiteOptions&) const = default;
};

}  // namespace trainyard::healthcheck
