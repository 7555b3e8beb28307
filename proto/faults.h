#pragma once
// The fault-injection grammar of the simulated Trainium node, so tests and demos can show detection.
// Set by agent flag (`--fault core:3=corrupt`, `--fault link=throttle:50MB`, `--fault link=drop`)
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

struct FaultPlan {
  std::map<int, CoreFault> cores;  // core index -> fault
  LinkFault link;
  bool operator==(const FaultPlan&) const = default;
};

std::string to_string(CoreFault f);
// Applies one "--fault" item to `plan`. Forms: "core:N=corrupt|hang|crash|none",
// "link=throttle:RATE" (RATE in bytes/s with optional K/M/G suffix and optional B),
// "link=drop", "link=none". Throws trainyard::InvalidInput(field "fault") on anything else.
// Rates are decimal (K = 1e3), as network rates are quoted.
void apply_fault_spec(FaultPlan& plan, const std::string& spec, int cores);
// The plan as the "--fault" items that rebuild it, in a stable order (cores ascending, then the
// link), for listing on the node; an empty plan gives no items.
std::vector<std::string> fault_specs(const FaultPlan& plan);

}  // namespace trainyard::proto
