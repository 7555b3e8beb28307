#include "agent/accelerator_suite.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "agent/core_checks.h"
#include "agent/watchdog.h"
#include "healthcheck/format.h"

namespace trainyard::agent {
namespace {

using healthcheck::AcceleratorReport;
using healthcheck::AcceleratorSuiteOptions;
using healthcheck::AcceleratorTest;
using healthcheck::Assessment;
using healthcheck::CheckResult;
using healthcheck::CheckStatus;
using healthcheck::CoreResult;
using healthcheck::millis_text;

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string test_title(AcceleratorTest test) {
  switch (test) {
    case AcceleratorTest::gemm: return "GEMM";
    case AcceleratorTest::stochastic_rounding: return "stochastic rounding";
    case AcceleratorTest::memory: return "memory";
  }
  return "unknown";
}

Assessment run_test(AcceleratorTest test, neuron::NeuronCore& core, const AcceleratorSuiteOptions& options,
                    std::stop_token stop) {
  switch (test) {
    case AcceleratorTest::gemm: return run_gemm_test(core, options.gemm_size, options.seed, stop);
    case AcceleratorTest::stochastic_rounding:
      return run_stochastic_rounding_test(core, options.rounding_samples, options.false_alarm_probability,
                                          options.seed, stop);
    case AcceleratorTest::memory: return run_memory_test(core, options.memory_words, stop);
  }
  return {};
}

CheckResult timed_check(AcceleratorTest test, neuron::NeuronCore& core, const AcceleratorSuiteOptions& options) {
  const std::string core_name = "core " + std::to_string(core.index());
  const double budget_ms = static_cast<double>(options.budget.count());
  const auto timed_out = [&](double elapsed_ms) {
    return CheckResult{test, CheckStatus::timed_out, elapsed_ms, budget_ms, elapsed_ms,
                       core_name + ": " + test_title(test) + " timed out after " + millis_text(elapsed_ms) +
                           " (budget " + millis_text(budget_ms) + ")"};
  };
  const Clock::time_point start = Clock::now();
  try {
    const Watchdog watchdog(options.budget);
    const Assessment outcome = run_test(test, core, options, watchdog.token());
    const double elapsed_ms = ms_since(start);
    if (elapsed_ms > budget_ms) return timed_out(elapsed_ms);
    if (outcome.passed()) return {test, CheckStatus::passed, outcome.measured, outcome.limit, elapsed_ms, ""};
    return {test, CheckStatus::failed, outcome.measured, outcome.limit, elapsed_ms, core_name + ": " + outcome.finding};
  } catch (const neuron::OperationCancelled&) {
    return timed_out(ms_since(start));
  } catch (const neuron::CoreCrashed& e) {
    return {test, CheckStatus::crashed, 0, 0, ms_since(start),
            core_name + ": crashed during " + test_title(test) + " (" + e.what() + ")"};
  }
}

// Speeds are compared with each other, so they are measured under the same conditions: on one
// thread, after the tests, each round timing one GEMM on every core in turn, so whatever else loads
// the host (the sanitizer run's other tests, a sibling hyperthread) falls on every core alike. Each
// core keeps its fastest GEMM: a preempted one only adds time.
void time_cores(neuron::NeuronDevice& device, const AcceleratorSuiteOptions& options, AcceleratorReport& report) {
  struct Timed {
    GemmTimer timer;
    CoreResult* result;
  };
  std::vector<Timed> timed;
  for (CoreResult& result : report.cores) {
    if (!result.checks.empty() && result.checks.front().status == CheckStatus::passed) {
      timed.push_back({GemmTimer(device.core(result.core), options.gemm_size, options.seed), &result});
    }
  }
  for (int round = 0; round < options.timing_repeats && !timed.empty(); ++round) {
    std::erase_if(timed, [&](Timed& t) {
      const Clock::time_point start = Clock::now();
      try {
        const Watchdog watchdog(options.budget);
        const double ms = t.timer.time_one(watchdog.token());
        t.result->gemm_ms = t.result->gemm_ms > 0 ? std::min(t.result->gemm_ms, ms) : ms;
        return false;
      } catch (const neuron::OperationCancelled&) {
        if (t.result->gemm_ms == 0) t.result->gemm_ms = ms_since(start);
      } catch (const neuron::CoreCrashed&) {
        t.result->gemm_ms = 0;
      }
      return true;
    });
  }
}

CoreResult test_core(neuron::NeuronCore& core, const AcceleratorSuiteOptions& options) {
  CoreResult result{core.index(), {}};
  bool trusted = true;
  for (AcceleratorTest test : {AcceleratorTest::gemm, AcceleratorTest::stochastic_rounding, AcceleratorTest::memory}) {
    if (!trusted) {
      result.checks.push_back({test, CheckStatus::skipped, 0, 0, 0, ""});
      continue;
    }
    result.checks.push_back(timed_check(test, core, options));
    const CheckStatus status = result.checks.back().status;
    trusted = status != CheckStatus::crashed && status != CheckStatus::timed_out;
  }
  return result;
}

}  // namespace

AcceleratorReport run_accelerator_suite(neuron::NeuronDevice& device, const AcceleratorSuiteOptions& options) {
  const Clock::time_point start = Clock::now();
  AcceleratorReport report;
  report.cores.resize(static_cast<std::size_t>(device.core_count()));
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int workers = std::min(options.parallel_cores > 0 ? options.parallel_cores : hardware, device.core_count());
  std::atomic<int> next_core{0};
  {
    std::vector<std::jthread> threads;
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([&] {
        for (int core = next_core++; core < device.core_count(); core = next_core++) {
          report.cores[static_cast<std::size_t>(core)] = test_core(device.core(core), options);
        }
      });
    }
  }
  time_cores(device, options, report);
  report.duration_ms = ms_since(start);
  return report;
}

}  // namespace trainyard::agent
