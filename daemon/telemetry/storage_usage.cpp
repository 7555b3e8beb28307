#include "daemon/telemetry/storage_usage.h"

namespace trainyard::daemon {

StorageUsage::JobEntry& StorageUsage::entry(JobId job, const std::string& share) {
  JobEntry& e = jobs_[job];
  e.share = share;
  return e;
}

void StorageUsage::note_rank_bytes(JobId job, const std::string& share, AttemptId attempt, const std::string& node,
                                   std::int64_t log_bytes, std::int64_t work_bytes) {
  StorageBytes& known = entry(job, share).ranks[{attempt, node}];
  shares_[share].log_bytes += log_bytes - known.log_bytes;
  shares_[share].work_bytes += work_bytes - known.work_bytes;
  known.log_bytes = log_bytes;
  known.work_bytes = work_bytes;
}

void StorageUsage::note_checkpoint_bytes(JobId job, const std::string& share, std::int64_t bytes) {
  JobEntry& e = entry(job, share);
  shares_[share].checkpoint_bytes += bytes - e.checkpoint_bytes;
  e.checkpoint_bytes = bytes;
}

void StorageUsage::set_over_quota(JobId job, bool over, MonoTime now) {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return;
  std::optional<MonoTime>& since = it->second.over_quota_since;
  if (!over) since.reset();
  else if (!since) since = now;
}

bool StorageUsage::over_quota(JobId job) const { return over_quota_since(job).has_value(); }

std::optional<MonoTime> StorageUsage::over_quota_since(JobId job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? std::nullopt : it->second.over_quota_since;
}

bool StorageUsage::scan_due(JobId job, const std::string& share, MonoTime now, Millis interval) {
  std::optional<MonoTime>& scanned_at = entry(job, share).scanned_at;
  if (scanned_at && now - *scanned_at < interval) return false;
  scanned_at = now;
  return true;
}

StorageBytes StorageUsage::of_job(JobId job) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return {};
  StorageBytes bytes{it->second.checkpoint_bytes, 0, 0};
  for (const auto& [key, rank] : it->second.ranks) {
    bytes.log_bytes += rank.log_bytes;
    bytes.work_bytes += rank.work_bytes;
  }
  return bytes;
}

StorageBytes StorageUsage::of_share(const std::string& share) const {
  auto it = shares_.find(share);
  return it == shares_.end() ? StorageBytes{} : it->second;
}

}  // namespace trainyard::daemon
