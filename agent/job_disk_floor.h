#pragma once
// A floor of free space on the agent's work filesystem that jobs may not write below (issue 53):
// where jobs' logs and work directories share a filesystem with something that must keep writing
// (the daemon's database on a small control-plane host, the agent's own credential), the attempt
// filling it is stopped before the filesystem is full, as a `disk_full` of its own doing. Pure: the
// agent measures (statvfs, each attempt's bytes at each heartbeat), this decides.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/job.h"

namespace trainyard::agent {

// An attempt's bytes on the work filesystem (its logs and work directory), now and at the last heartbeat.
struct AttemptWrites {
  AttemptId attempt = 0;
  std::int64_t bytes = 0;
  std::int64_t bytes_before = 0;
};

struct DiskFloorStop {
  AttemptId attempt = 0;
  // The attempt's stop reason; "job disk floor: " classifies its end as disk_full (daemon/base/failure_rules.cpp).
  std::string reason;
};

// Below `floor_mb` free (0: no floor), the attempt that wrote the most since the last heartbeat.
// None while above the floor, or when no attempt wrote: something else fills the filesystem, and
// stopping a job would not free it.
std::optional<DiskFloorStop> attempt_to_stop_for_disk_floor(std::int64_t free_mb, std::int64_t floor_mb,
                                                            const std::vector<AttemptWrites>& writes);

}  // namespace trainyard::agent
