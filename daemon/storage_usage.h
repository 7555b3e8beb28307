#pragma once
// What each job and share keeps on disk (issue 17 item 7): checkpoint bytes, which the daemon
// measures in the job's checkpoint directory after each checkpoint it records, and log bytes, which
// each agent reports per rank with its heartbeats. The daemon sums them per job and per share.
//
// In memory only: a restarted daemon knows a job's logs again at the next heartbeat and its
// checkpoints at its next checkpoint; a finished job keeps the figures it had.
//
// Threading contract: I/O thread only.
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "proto/job.h"

namespace trainyard::daemon {

struct StorageBytes {
  std::int64_t checkpoint_bytes = 0;
  std::int64_t log_bytes = 0;
  std::int64_t total() const { return checkpoint_bytes + log_bytes; }
  bool operator==(const StorageBytes&) const = default;
};

class StorageUsage {
 public:
  // The size of one rank's log, as its node reported it.
  void note_log_bytes(JobId job, const std::string& share, AttemptId attempt, const std::string& node, std::int64_t bytes);
  // The job's checkpoint directory, as the last scan found it.
  void note_checkpoint_bytes(JobId job, const std::string& share, std::int64_t bytes);
  // Whether the job (or its share) was over its storage quota at its latest check.
  void set_over_quota(JobId job, bool over);
  bool over_quota(JobId job) const;

  StorageBytes of_job(JobId job) const;
  StorageBytes of_share(const std::string& share) const;
  const std::map<std::string, StorageBytes>& shares() const { return shares_; }

 private:
  struct JobEntry {
    std::string share;
    std::int64_t checkpoint_bytes = 0;
    std::map<std::pair<AttemptId, std::string>, std::int64_t> logs;  // by attempt and node
    bool over_quota = false;
  };
  JobEntry& entry(JobId job, const std::string& share);

  std::map<JobId, JobEntry> jobs_;
  std::map<std::string, StorageBytes> shares_;
};

}  // namespace trainyard::daemon
