#include "daemon/cluster_sampler.h"

#include <spdlog/spdlog.h>

namespace trainyard::daemon {

ClusterSampler::ClusterSampler(StoreWorker& store, const JobManager& jobs, const DaemonMetrics& metrics,
                               std::chrono::seconds interval)
    : store_(store), jobs_(jobs), metrics_(metrics), interval_(interval) {}

void ClusterSampler::tick(TimePoint now, MonoTime mono) {
  // The first sample waits an interval: agents reconnect after a restart, and a sample taken at
  // once would count their nodes as unusable.
  if (!last_) last_ = mono;
  if (mono - *last_ < interval_) return;
  last_ = mono;
  const std::vector<NodeView> nodes = jobs_.nodes();
  const ActivityTotals totals = metrics_.activity_totals();
  const ClusterSample sample = take_sample(now, cluster_gauges(nodes, jobs_.active_jobs()), totals, before_);
  before_ = totals;
  store::Change change;
  change.cluster_samples.push_back({now, to_json(sample)});
  change.cluster_samples_kept_from = now - kClusterHistoryKept;
  store_.write(std::move(change), [](const Result<void>& written, store::Change&) {
    if (!written) spdlog::warn("event=cluster_sample_not_stored error=\"{}\"", written.error().message);
  });
}

}  // namespace trainyard::daemon
