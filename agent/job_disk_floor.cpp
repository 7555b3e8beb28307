#include "agent/job_disk_floor.h"

#include <algorithm>

namespace trainyard::agent {

std::optional<DiskFloorStop> attempt_to_stop_for_disk_floor(std::int64_t free_mb, std::int64_t floor_mb,
                                                            const std::vector<AttemptWrites>& writes) {
  if (floor_mb == 0 || free_mb >= floor_mb) return std::nullopt;
  const auto written = [](const AttemptWrites& w) { return w.bytes - w.bytes_before; };
  const auto most = std::ranges::max_element(writes, {}, written);
  if (most == writes.end() || written(*most) <= 0) return std::nullopt;
  constexpr std::int64_t kKiB = 1024;
  return DiskFloorStop{most->attempt,
                       "job disk floor: the node's work filesystem has " + std::to_string(free_mb) +
                           " MiB free, below the agent's --job-disk-floor-mb " + std::to_string(floor_mb) +
                           "; this attempt wrote the most there (" + std::to_string(written(*most) / kKiB) +
                           " KiB since the last heartbeat) and was stopped before the filesystem filled"};
}

}  // namespace trainyard::agent
