#pragma once
// The simulated node's settings as the agent's flags and config-file keys: how many cores it has,
// the seed of their stochastic rounding, the faults injected into it, and its data plane (where it
// listens for its peers' ring connections, and how long a silent peer may hold up a collective).
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "neuron/tcp_socket.h"
#include "proto/faults.h"
#include "proto/flag_parser.h"

namespace trainyard::neuron {

struct SimulatedNodeSettings {
  int cores = 32;
  std::uint64_t seed = 0;
  std::vector<std::string> faults;  // "--fault" items (proto/faults.h)
  std::string data_listen = "127.0.0.1:0";
  std::chrono::milliseconds collective_timeout{30000};
};

void add_simulated_node_flags(FlagParser& flags, SimulatedNodeSettings& settings);

// The faults the "--fault" items describe. Throws InvalidInput("fault", ...) for a bad one.
FaultPlan fault_plan(const SimulatedNodeSettings& settings);

// Where the data plane listens: HOST:PORT, where port 0 (unlike in a peer's address) picks a free
// one. Throws InvalidInput("--data-listen", ...).
HostPort data_listen_address(const SimulatedNodeSettings& settings);

}  // namespace trainyard::neuron
