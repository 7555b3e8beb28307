#pragma once
// /v1/cluster: goodput over jobs or a window of time, and the cluster's history for charts.
#include <chrono>

#include "proto/time.h"

namespace trainyard::daemon {

struct ApiCall;
class StoreWorker;

class ClusterApi {
 public:
  ClusterApi(StoreWorker& store, const TimeSource& clock) : store_(store), clock_(clock) {}

  // GET /v1/cluster/history chooses its buckets knowing how often samples are taken (0: never).
  void set_history_interval(std::chrono::seconds interval) { history_interval_ = interval; }

  void cluster_goodput(ApiCall call);
  void cluster_history(ApiCall call);

 private:
  StoreWorker& store_;
  const TimeSource& clock_;
  std::chrono::seconds history_interval_{60};
};

}  // namespace trainyard::daemon
