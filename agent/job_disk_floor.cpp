#include "agent/job_disk_floor.h"

#include <algorithm>

namespace trainyard::agent {

std::optional<DiskFloorStop> attempt_to_stop_for_disk_floor(const FilesystemWrites& filesystem, std::int64_t floor_mb) {
  if (floor_mb == 0 || filesystem.free_mb >= floor_mb) return std::nullopt;
  const auto written = [](const AttemptWrites& w) { return w.bytes - w.bytes_before; };
  const auto most = std::ranges::max_element(filesystem.writes, {}, written);
  if (most == filesystem.writes.end() || written(*most) <= 0) return std::nullopt;
  constexpr std::int64_t kKiB = 1024;
  return DiskFloorStop{most->attempt,
                       "job disk floor: the node's " + filesystem.role + " filesystem has " +
                           std::to_string(filesystem.free_mb) + " MiB free, below the agent's --job-disk-floor-mb " +
                           std::to_string(floor_mb) + "; this attempt wrote the most there (" +
                           std::to_string(written(*most) / kKiB) +
                           " KiB since the last heartbeat) and was stopped before the filesystem filled"};
}

std::vector<DiskFloorStop> attempts_to_stop_for_disk_floor(const std::vector<FilesystemWrites>& filesystems,
                                                           std::int64_t floor_mb) {
  std::vector<DiskFloorStop> stops;
  for (const FilesystemWrites& filesystem : filesystems) {
    auto stop = attempt_to_stop_for_disk_floor(filesystem, floor_mb);
    if (stop && std::ranges::find(stops, stop->attempt, &DiskFloorStop::attempt) == stops.end()) {
      stops.push_back(std::move(*stop));
    }
  }
  return stops;
}

}  // namespace trainyard::agent
