#include "neuron/node_flags.h"

#include "proto/errors.h"

namespace trainyard::neuron {

void add_simulated_node_flags(FlagParser& flags, SimulatedNodeSettings& settings) {
  flags.add_int("cores", "NeuronCores of the simulated node", &settings.cores, 1, 4096);
  flags.add_int("seed", "seed of the simulated device's stochastic rounding", &settings.seed, 0, INT64_MAX);
  flags.add_list("fault",
                 "inject a fault: core:N=corrupt|hang|crash|slow:K, node=slow:K, link=throttle:RATE, link=drop",
                 &settings.faults);
  flags.add_string("data-listen", "HOST:PORT of the data-plane (collectives) listener; port 0 picks one",
                   &settings.data_listen);
  flags.add_duration<std::chrono::milliseconds>("collective-timeout-ms", "a peer silent this long fails the collective",
                                                &settings.collective_timeout, 10, 3'600'000);
}

FaultPlan fault_plan(const SimulatedNodeSettings& settings) {
  FaultPlan plan;
  for (const std::string& spec : settings.faults) apply_fault_spec(plan, spec, settings.cores);
  return plan;
}

HostPort data_listen_address(const SimulatedNodeSettings& settings) {
  const std::string& text = settings.data_listen;
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) throw InvalidInput("--data-listen", "must be HOST:PORT");
  if (colon + 2 == text.size() && text.back() == '0') return HostPort{text.substr(0, colon), 0};
  return parse_host_port(text, "--data-listen");
}

}  // namespace trainyard::neuron
