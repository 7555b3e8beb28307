#pragma once
// A floor of free space on the filesystems jobs write to that they may not write below (issue 53,
// 56): where jobs' logs, work directories or checkpoint directories share a filesystem with
// something that must keep writing (the daemon's database and its default checkpoint root on a
// small control-plane host, the agent's own credential), the attempt filling it is stopped before
// the filesystem is full, as a `disk_full` of its own doing. Pure: the agent measures (statvfs,
// each attempt's bytes on each filesystem at each heartbeat), this decides.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/job.h"

namespace trainyard::agent {

// An attempt's bytes on one filesystem (its logs and work directory on the work filesystem, its
// job's checkpoint directory on the checkpoint one), now and at the last heartbeat.
struct AttemptWrites {
  AttemptId attempt = 0;
  std::int64_t bytes = 0;
  std::int64_t bytes_before = 0;
};

// A filesystem jobs write to: what the reason calls it ("work", "checkpoint"), its free MiB, and
// each attempt's bytes on it.
struct FilesystemWrites {
  std::string role;
  std::int64_t free_mb = 0;
  std::vector<AttemptWrites> writes;
};

struct DiskFloorStop {
  AttemptId attempt = 0;
  // The attempt's stop reason; "job disk floor: " classifies its end as disk_full (daemon/base/failure_rules.cpp).
  std::string reason;
};

// Below `floor_mb` free (0: no floor), the attempt that wrote the most on that filesystem since the
// last heartbeat. None while above the floor, or when no attempt wrote: something else fills the
// filesystem, and stopping a job would not free it.
std::optional<DiskFloorStop> attempt_to_stop_for_disk_floor(const FilesystemWrites& filesystem, std::int64_t floor_mb);

// The stops of every filesystem below the floor, each attempt at most once (the first filesystem's
// reason: one stop frees both).
std::vector<DiskFloorStop> attempts_to_stop_for_disk_floor(const std::vector<FilesystemWrites>& filesystems,
                                                           std::int64_t floor_mb);

}  // namespace trainyard::agent
