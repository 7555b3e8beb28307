#pragma once
// The fault-injection grammar of the simulated Trainium node, so tests and demos can show detection.
// Set by agent flag (`--fault core:3=corrupt`, `--fault core:1=slow:2`, `--fault node=slow:1.5`,
// `--fault link=throttle:50MB`, `--fault link=drop`)
// or by the admin API; listed on the node. It lives in proto because both sides speak it: the
// daemon validates and lists what the admin API sets, the simulated node (neuron/) applies it.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trainyard::inline proto {

enum class CoreFault { none, corrupt, hang, crash };

struct LinkFault {
  std::optional<double> throttle_bytes_per_s;  // cap on the data-plane send rate
  bool drop = false;                           // the link fails every transfer
  bool operator==(const LinkFault&) const = default;
};

// How many times longer than a healthy one a slow core takes to compute (a straggler: a GPU at
// half clock, a thermally throttled device). It computes correctly, only slower.
inline constexpr double kMaxSlowdown = 100;

struct FaultPlan {
  std::map<int, CoreFault> cores;  // core index -> fault
  std::map<int, double> slow_cores;  // core index -> slowdown (> 1)
  double slow_node = 1;              // every core's slowdown (1: none); a slow core's multiplies it
  LinkFault link;
  bool operator==(const FaultPlan&) const = default;
};

// How many times longer than a healthy core `core` takes under `plan`: 1 when it is not slow.
double slowdown_of(const FaultPlan& plan, int core);

std::string to_string(CoreFault f);
// Applies one "--fault" item to `plan`. Forms: "core:N=corrupt|hang|crash|slow:K|none" (none
// clears both the core's fault and its slowdown), "node=slow:K|none" (K a factor in (1, 100]),
// "link=throttle:RATE" (RATE in bytes/s with optional K/M/G suffix and optional B),
// "link=drop", "link=none". Throws trainyard::InvalidInput(field "fault") on anything else.
// Rates are decimal (K = 1e3), as network rates are quoted.
void apply_fault_spec(FaultPlan& plan, const std::string& spec, int cores);
// The plan as the "--fault" items that rebuild it, in a stable order (cores ascending, then the
// node's slowdown, then the link), for listing on the node; an empty plan gives no items.
std::vector<std::string> fault_specs(const FaultPlan& plan);

}  // namespace trainyard::proto
