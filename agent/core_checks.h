#pragma once
// The device part of the accelerator suite's three per-core tests (healthcheck/accelerator_checks.h
// explains each test and judges what comes back): drive one NeuronCore of the simulated device with
// known inputs and hand its outputs to the pure assessment.
#include <cstddef>
#include <cstdint>
#include <stop_token>

#include "healthcheck/accelerator_checks.h"
#include "neuron/device.h"

namespace trainyard::agent {

// Each throws what the core throws: CoreCrashed, OperationCancelled.
healthcheck::Assessment run_gemm_test(neuron::NeuronCore& core, int size, std::uint64_t seed, std::stop_token stop);
healthcheck::Assessment run_stochastic_rounding_test(neuron::NeuronCore& core, std::size_t samples,
                                                double false_alarm_probability, std::uint64_t seed,
                                                std::stop_token stop);
// The fastest of `repeats` GEMMs of size x size on the core, in ms: the core's speed, which the
// daemon compares with its other cores' and with other nodes' (healthcheck/verdict.h). A stop ends
// it with the fastest so far (or, before any finished, the time waited).
double time_gemm(neuron::NeuronCore& core, int size, int repeats, std::uint64_t seed, std::stop_token stop);
healthcheck::Assessment run_memory_test(neuron::NeuronCore& core, std::size_t words, std::stop_token stop);

}  // namespace trainyard::agent
