#include "daemon/policy/storage_quota.h"

#include <algorithm>

namespace trainyard::daemon {
namespace {

std::int64_t excess(std::int64_t bytes, std::optional<std::int64_t> limit_mb) {
  if (!limit_mb) return 0;
  return std::max<std::int64_t>(0, bytes - *limit_mb * kBytesPerMb);
}

}  // namespace

std::int64_t bytes_over_quota(std::int64_t job_bytes, std::optional<std::int64_t> job_limit_mb, std::int64_t share_bytes,
                              std::optional<std::int64_t> share_limit_mb) {
  return std::max(excess(job_bytes, job_limit_mb), excess(share_bytes, share_limit_mb));
}

std::vector<std::int64_t> checkpoints_to_prune(const std::vector<CheckpointUsage>& oldest_first, std::int64_t bytes_over) {
  const auto newest_valid =
      std::find_if(oldest_first.rbegin(), oldest_first.rend(), [](const CheckpointUsage& c) { return c.valid; });
  if (newest_valid == oldest_first.rend()) return {};
  const auto prunable_end = std::prev(newest_valid.base());  // the newest valid one and all after it stay
  std::vector<std::int64_t> steps;
  std::int64_t freed = 0;
  for (auto it = oldest_first.begin(); it != prunable_end && freed < bytes_over; ++it) {
    steps.push_back(it->step);
    freed += it->bytes;
  }
  return steps;
}

}  // namespace trainyard::daemon
