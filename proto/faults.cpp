#include "proto/faults.h"

#include <charconv>
#include <cmath>
#include <string_view>

#include "proto/errors.h"

namespace trainyard::inline proto {
namespace {

[[noreturn]] void reject(const std::string& spec, const std::string& why) {
  throw InvalidInput("fault", "\"" + spec + "\": " + why);
}

CoreFault parse_core_fault(const std::string& spec, std::string_view name) {
  for (CoreFault f : {CoreFault::none, CoreFault::corrupt, CoreFault::hang, CoreFault::crash}) {
    if (name == to_string(f)) return f;
  }
  reject(spec, "core fault must be one of none, corrupt, hang, crash, slow:K");
}

int parse_core_index(const std::string& spec, std::string_view text, int cores) {
  int index = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
  if (ec != std::errc{} || end != text.data() + text.size() || index < 0 || index >= cores) {
    reject(spec, "core index must be an integer in 0.." + std::to_string(cores - 1));
  }
  return index;
}

// "slow:K" -> K, a factor in (1, kMaxSlowdown].
double parse_slowdown(const std::string& spec, std::string_view action) {
  std::string_view text = action.substr(5);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || !(value > 1) || value > kMaxSlowdown) {
    reject(spec, "slow takes a factor above 1 and at most 100 (slow:2 computes twice as long)");
  }
  return value;
}

std::string format_number(double value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, ec == std::errc{} ? end : buffer);
}

// "50MB", "50M", "1.5G", "800" -> bytes per second.
double parse_rate(const std::string& spec, std::string_view text) {
  if (!text.empty() && (text.back() == 'B' || text.back() == 'b')) text.remove_suffix(1);
  double scale = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K': case 'k': scale = 1e3; break;
      case 'M': case 'm': scale = 1e6; break;
      case 'G': case 'g': scale = 1e9; break;
      default: break;
    }
    if (scale != 1) text.remove_suffix(1);
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value) ||
      value <= 0) {
    reject(spec, "throttle rate must be a positive number of bytes/s with optional K, M or G and B");
  }
  return value * scale;
}

// The inverse of parse_rate in the largest unit it reaches: 5e7 -> "50MB", 2.5e6 -> "2.5MB".
std::string format_rate(double bytes_per_s) {
  struct Unit {
    double scale;
    const char* suffix;
  };
  Unit unit{1, "B"};
  for (Unit u : {Unit{1e9, "GB"}, Unit{1e6, "MB"}, Unit{1e3, "KB"}}) {
    if (bytes_per_s >= u.scale) {
      unit = u;
      break;
    }
  }
  return format_number(bytes_per_s / unit.scale) + unit.suffix;
}

}  // namespace

std::string to_string(CoreFault f) {
  switch (f) {
    case CoreFault::none: return "none";
    case CoreFault::corrupt: return "corrupt";
    case CoreFault::hang: return "hang";
    case CoreFault::crash: return "crash";
  }
  return "none";
}

double slowdown_of(const FaultPlan& plan, int core) {
  const auto slow = plan.slow_cores.find(core);
  return plan.slow_node * (slow == plan.slow_cores.end() ? 1.0 : slow->second);
}

void apply_fault_spec(FaultPlan& plan, const std::string& spec, int cores) {
  const std::size_t eq = spec.find('=');
  if (eq == std::string::npos) reject(spec, "expected core:N=FAULT, node=FAULT or link=FAULT");
  const std::string_view target = std::string_view(spec).substr(0, eq);
  const std::string_view action = std::string_view(spec).substr(eq + 1);

  if (target.starts_with("core:")) {
    const int index = parse_core_index(spec, target.substr(5), cores);
    if (action.starts_with("slow:")) {
      plan.slow_cores[index] = parse_slowdown(spec, action);
      return;
    }
    const CoreFault fault = parse_core_fault(spec, action);
    if (fault == CoreFault::none) {
      plan.cores.erase(index);
      plan.slow_cores.erase(index);
    } else {
      plan.cores[index] = fault;
    }
    return;
  }
  if (target == "node") {
    if (action == "none") {
      plan.slow_node = 1;
    } else if (action.starts_with("slow:")) {
      plan.slow_node = parse_slowdown(spec, action);
    } else {
      reject(spec, "node fault must be slow:K or none");
    }
    return;
  }
  if (target != "link") reject(spec, "target must be core:N, node or link");
  if (action == "none") {
    plan.link = LinkFault{};
  } else if (action == "drop") {
    plan.link.drop = true;
  } else if (action.starts_with("throttle:")) {
    plan.link.throttle_bytes_per_s = parse_rate(spec, action.substr(9));
  } else {
    reject(spec, "link fault must be throttle:RATE, drop or none");
  }
}

std::vector<std::string> fault_specs(const FaultPlan& plan) {
  std::vector<std::string> specs;
  for (const auto& [core, fault] : plan.cores) {
    specs.push_back("core:" + std::to_string(core) + "=" + to_string(fault));
  }
  for (const auto& [core, slowdown] : plan.slow_cores) {
    specs.push_back("core:" + std::to_string(core) + "=slow:" + format_number(slowdown));
  }
  if (plan.slow_node != 1) specs.push_back("node=slow:" + format_number(plan.slow_node));
  if (plan.link.throttle_bytes_per_s) {
    specs.push_back("link=throttle:" + format_rate(*plan.link.throttle_bytes_per_s));
  }
  if (plan.link.drop) specs.push_back("link=drop");
  return specs;
}

}  // namespace trainyard::proto
