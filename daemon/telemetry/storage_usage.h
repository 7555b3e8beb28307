#pragma once
// What each job and share keeps on disk: checkpoint bytes, which the daemon measures in the job's
// checkpoint directory after each checkpoint it records and periodically while a job with a quota
// runs, and log and work-directory bytes, which each agent reports per rank with its heartbeats.
// The daemon sums them per job and per share.
//
// In memory only: a restarted daemon knows a job's logs again at the next heartbeat and its
// checkpoints at its next checkpoint; a finished job keeps the figures it had.
//
// Threading contract: I/O thread only.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "proto/job.h"
#include "proto/time.h"

namespace trainyard::daemon {

struct StorageBytes {
  std::int64_t checkpoint_bytes = 0;
  std::int64_t log_bytes = 0;
  std::int64_t work_bytes = 0;  // the attempts' work directories besides their logs
  std::int64_t total() const { return checkpoint_bytes + log_bytes + work_bytes; }
  bool operator==(const StorageBytes&) const = default;
};

class StorageUsage {
 public:
  // The size of one rank's log and of the rest of its work directory, as its node reported them.
  void note_rank_bytes(JobId job, const std::string& share, AttemptId attempt, const std::string& node,
                       std::int64_t log_bytes, std::int64_t work_bytes);
  // The job's checkpoint directory, as the last scan found it.
  void note_checkpoint_bytes(JobId job, const std::string& share, std::int64_t bytes);
  // Whether the job (or its share) was over its storage quota at its latest check, at `now`.
  void set_over_quota(JobId job, bool over, MonoTime now);
  bool over_quota(JobId job) const;
  // Since when the job has been over without a break; nullopt when it is within its quota.
  std::optional<MonoTime> over_quota_since(JobId job) const;
  // Whether the job's checkpoint directory is due a measurement (none for `interval`); marks it
  // measured at `now` when it is.
  bool scan_due(JobId job, const std::string& share, MonoTime now, Millis interval);

  StorageBytes of_job(JobId job) const;
  StorageBytes of_share(const std::string& share) const;
  const std::map<std::string, StorageBytes>& shares() const { return shares_; }

 private:
  struct JobEntry {
    std::string share;
    std::int64_t checkpoint_bytes = 0;
    std::map<std::pair<AttemptId, std::string>, StorageBytes> ranks;  // logs and work, by attempt and node
    std::optional<MonoTime> over_quota_since;
    std::optional<MonoTime> scanned_at;
  };
  JobEntry& entry(JobId job, const std::string& share);

  std::map<JobId, JobEntry> jobs_;
  std::map<std::string, StorageBytes> shares_;
};

}  // namespace trainyard::daemon
