#pragma once
// The accelerator sanity suite (docs/DESIGN.md "Health checks"), run by the agent on every core of its device:
// the GEMM, stochastic-rounding and memory tests of core_checks.h, each under its own time
// budget (watchdog.h), so a hung core shows up as `timed_out` after its budget rather than hanging
// the suite. A core that crashes or times out is not given its remaining tests (`skipped`).
// A test that completes but over its budget is `timed_out` too: a core that slow is not healthy.
// Once every core is tested, each core whose GEMM test passed is timed (GemmTimer), so the daemon
// can compare core speeds; a core that crashes while timed has no figure, one that hangs has the
// fastest so far or the time waited.
//
// Cores are tested concurrently by `parallel_cores` threads: real NeuronCores are independent, and
// on the simulated device it keeps a hung core from delaying the others.
//
// Threading contract: the suite uses the device's cores exclusively while it runs (no attempt may be
// using them); `set_faults` may still be called from elsewhere.
#include "healthcheck/results.h"
#include "healthcheck/suite_options.h"
#include "neuron/device.h"

namespace trainyard::agent {

healthcheck::AcceleratorReport run_accelerator_suite(neuron::NeuronDevice& device,
                                                const healthcheck::AcceleratorSuiteOptions& options);

}  // namespace trainyard::agent
