#pragma once
// Free disk space as a health check: a node whose work or checkpoint filesystem
// is nearly full would fail the next job that writes a log line or a checkpoint there, so it is
// SUSPECT and takes no new work until space returns. Pure: the agent measures (statvfs), the daemon
// applies the state; this only judges the numbers.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/node.h"

namespace trainyard::healthcheck {

// A filesystem is low when its free space is below either floor (0 turns a floor off).
struct DiskPolicy {
  std::int64_t min_free_mb = 1024;
  int min_free_pct = 0;  // of the filesystem's size
  bool operator==(const DiskPolicy&) const = default;
};

// Why the node is short of space ("work filesystem: 512 MiB free of 100000 MiB, below 1024 MiB"),
// naming every low filesystem; nullopt when all have enough.
std::optional<std::string> low_disk_reason(const std::vector<DiskSpace>& disks, const DiskPolicy& policy);

}  // namespace trainyard::healthcheck
