#include "daemon/storage_usage.h"

namespace trainyard::daemon {

StorageUsage::JobEntry& StorageUsage::entry(JobId job, const std::string& share) {
  JobEntry& e = jobs_[job];
  e.share = share;
  return e;
}

void StorageUsage::note_log_bytes(JobId job, const std::string& share, AttemptId attempt, const std::string& node,
                                  std::int64_t bytes) {
  std::int64_t& known = entry(job, share).logs[{attempt, node}];
  shares_[share].log_bytes += bytes - known;
  known = bytes;
}

void StorageUsage::note_checkpoint_bytes(JobId job, const std::string& share, std::int64_t bytes) {
  JobEntry& e = entry(job, share);
  shares_[share].checkpoint_bytes += bytes - e.checkpoint_bytes;
  e.checkpoint_bytes = bytes;
}

void StorageUsage::set_over_quota(JobId job, bool over) {
  if (auto it = jobs_.find(job); it != jobs_.end()) it->second.over_quota = over;
}

bool StorageUsage::over_quota(JobId job) const {
  auto it = jobs_.find(job);
  return it != jobs_.end() && it->second.over_quota;
}

StorageBytes StorageUsage::of_job(JobId job) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return {};
  StorageBytes bytes{it->second.checkpoint_bytes, 0};
  for (const auto& [key, log] : it->second.logs) bytes.log_bytes += log;
  return bytes;
}

StorageBytes StorageUsage::of_share(const std::string& share) const {
  auto it = shares_.find(share);
  return it == shares_.end() ? StorageBytes{} : it->second;
}

}  // namespace trainyard::daemon
