// The cluster over time: its stored samples over a window, folded into buckets for charts.
#include "daemon/cluster_history.h"
#include "daemon/api/call.h"
#include "daemon/api/cluster.h"
#include "daemon/api/query.h"
#include "daemon/base/store_worker.h"

namespace trainyard::daemon {
namespace {

constexpr std::chrono::hours kDefaultWindow{24};
constexpr std::chrono::hours kLongestHistoryWindow{7 * 24};  // within what the sampler keeps (kClusterHistoryKept)

// The rows of the window as samples, oldest first; a damaged row is skipped.
std::vector<ClusterSample> samples_of(const std::vector<store::ClusterSampleRow>& rows) {
  std::vector<ClusterSample> samples;
  samples.reserve(rows.size());
  for (const store::ClusterSampleRow& row : rows) {
    std::optional<ClusterSample> sample = cluster_sample_from_json(row.record);
    if (!sample) continue;
    sample->at = row.at;
    samples.push_back(std::move(*sample));
  }
  return samples;
}

}  // namespace

void ClusterApi::cluster_history(ApiCall call) {
  const std::chrono::hours window = query_window(call.request, kDefaultWindow, kLongestHistoryWindow);
  const TimePoint to = clock_.system_now();
  const TimePoint from = to - window;
  const std::chrono::seconds interval = history_interval_;
  const std::chrono::seconds bucket = history_bucket(window, interval);
  const bool activity = call.who.may(Action::read_all_jobs);
  store_.read(
      [call, from, to, bucket, interval, activity](store::Store& store) {
        Json body =
            history_body(samples_of(store.cluster_samples_since(from)), from, to, bucket, interval, activity);
        return StoreWorker::Continuation([call, body = std::move(body)] { call.reply(200, body); });
      },
      [call](const Error& error) { call.fail(error.during("could not read the cluster's history")); });
}

}  // namespace trainyard::daemon
