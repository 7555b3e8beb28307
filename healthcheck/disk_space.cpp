#include "healthcheck/disk_space.h"

namespace trainyard::healthcheck {
namespace {

std::optional<std::string> shortfall(const DiskSpace& d, const DiskPolicy& policy) {
  const std::string head =
      d.role + " filesystem: " + std::to_string(d.free_mb) + " MiB free of " + std::to_string(d.total_mb) + " MiB, below ";
  if (policy.min_free_mb > 0 && d.free_mb < policy.min_free_mb) return head + std::to_string(policy.min_free_mb) + " MiB";
  // Integer arithmetic: free/total < pct/100, without rounding a nearly full disk up to "enough".
  if (policy.min_free_pct > 0 && d.total_mb > 0 && d.free_mb * 100 < d.total_mb * policy.min_free_pct) {
    return head + std::to_string(policy.min_free_pct) + "%";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> low_disk_reason(const std::vector<DiskSpace>& disks, const DiskPolicy& policy) {
  std::string reason;
  for (const DiskSpace& d : disks) {
    if (auto why = shortfall(d, policy)) reason += (reason.empty() ? "" : "; ") + *why;
  }
  if (reason.empty()) return std::nullopt;
  return "low disk space: " + reason;
}

}  // namespace trainyard::healthcheck
