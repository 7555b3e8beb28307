#pragma once
// Storage quotas: the checkpoint and log bytes a job, and a share, may keep, and
// which checkpoints give way when they hold more. Pure: numbers in, decisions out; the job manager
// measures (daemon/telemetry/storage_usage.h), deletes on the file worker and reports.
//
// Pruning frees the oldest checkpoints first and never touches the newest valid one, nor anything
// newer than it (a checkpoint published but not yet reported is not valid yet, and may be the one
// the next retry needs). A job whose newest valid checkpoint alone is over its quota stays over it:
// it gets the event, not a deleted resume point.
#include <cstdint>
#include <optional>
#include <vector>

namespace trainyard::daemon {

inline constexpr std::int64_t kBytesPerMb = 1024 * 1024;

// One step directory of a job's checkpoints, as measured.
struct CheckpointUsage {
  std::int64_t step = 0;
  std::int64_t bytes = 0;
  bool valid = false;  // a retry may resume from it (job_checkpoints.h)
};

// How many bytes the job must give up: the larger of its excess over its own quota and its share's
// excess over the share's; 0 when within both (an absent limit is no limit).
std::int64_t bytes_over_quota(std::int64_t job_bytes, std::optional<std::int64_t> job_limit_mb, std::int64_t share_bytes,
                              std::optional<std::int64_t> share_limit_mb);

// The steps to delete, oldest first, to free `bytes_over` bytes: as many of the oldest prunable
// checkpoints as it takes (all of them when even that is not enough). `oldest_first` is the job's
// checkpoints in step order.
std::vector<std::int64_t> checkpoints_to_prune(const std::vector<CheckpointUsage>& oldest_first, std::int64_t bytes_over);

}  // namespace trainyard::daemon
