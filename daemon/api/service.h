#pragma once
// The daemon about itself: GET /healthz, GET /v1/cluster, GET /v1/openapi.json and GET /metrics.
#include <functional>
#include <optional>
#include <string>

#include "store/store.h"

namespace trainyard::daemon {

struct ApiCall;
class JobManager;

class ServiceApi {
 public:
  ServiceApi(std::string version, const JobManager& jobs) : version_(std::move(version)), jobs_(jobs) {}

  // GET /metrics answers what `render` returns (Prometheus text); without a token when
  // `public_access`. Unset, /metrics is not served.
  void set_metrics_exposition(std::function<std::string()> render, bool public_access);
  bool serves_metrics() const { return static_cast<bool>(render_metrics_); }
  bool metrics_public() const { return metrics_public_; }
  // GET /healthz names this active daemon's lease: its epoch and advertise URL (daemon/standby.h).
  void set_lease(store::LeaseState lease) { lease_ = std::move(lease); }
  // Why the store looks unreachable, or nullopt (ActiveLease). /healthz also says when the store's
  // writes fail (JobManager::store_writes_failing).
  void set_store_health(std::function<std::optional<std::string>()> problem) { store_problem_ = std::move(problem); }

  void healthz(ApiCall call);
  // The cluster's own condition for every page of the dashboard: store_problem while the store's
  // writes fail. 200 either way, unlike /healthz, which answers load balancers.
  void cluster_status(ApiCall call);
  void openapi(ApiCall call);
  void metrics_exposition(ApiCall call);

 private:
  std::string version_;
  const JobManager& jobs_;
  std::string openapi_text_;  // rendered on first request: the table does not change
  std::function<std::string()> render_metrics_;
  bool metrics_public_ = false;
  store::LeaseState lease_;
  std::function<std::optional<std::string>()> store_problem_;
};

}  // namespace trainyard::daemon
