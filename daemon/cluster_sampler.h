#pragma once
// Keeps the cluster's history (daemon/cluster_history.h): on the daemon's tick, once an interval has
// passed since the last sample, reads the live state and the counters, and stores the sample with
// the retention prune in one write. I/O thread only.
#include <chrono>
#include <optional>

#include "daemon/base/store_worker.h"
#include "daemon/cluster_history.h"
#include "daemon/daemon_metrics.h"
#include "daemon/job_manager.h"

namespace trainyard::daemon {

// How long samples are kept: the longest window the API serves (7 d), and a day to spare.
inline constexpr std::chrono::hours kClusterHistoryKept{8 * 24};

class ClusterSampler {
 public:
  // `interval` positive; both references must outlive the sampler.
  ClusterSampler(StoreWorker& store, const JobManager& jobs, const DaemonMetrics& metrics, std::chrono::seconds interval);

  // Samples when `interval` has passed since the last sample (or since the first call).
  void tick(TimePoint now, MonoTime mono);

 private:
  StoreWorker& store_;
  const JobManager& jobs_;
  const DaemonMetrics& metrics_;
  std::chrono::seconds interval_;
  std::optional<MonoTime> last_;
  ActivityTotals before_;
};

}  // namespace trainyard::daemon
