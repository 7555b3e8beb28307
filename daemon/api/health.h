#pragma once
// /v1/health-checks and /v1/canaries: health checks on demand and the canaries' history.
namespace trainyard::daemon {

struct ApiCall;
class Auditor;
class JobManager;
class JobViews;
class StoreWorker;

class HealthApi {
 public:
  HealthApi(JobManager& jobs, StoreWorker& store, const JobViews& views, Auditor& audit)
      : jobs_(jobs), store_(store), views_(views), audit_(audit) {}

  void start_health_check(ApiCall call);
  void get_health_check(ApiCall call);
  void list_health_checks(ApiCall call);
  void list_canaries(ApiCall call);
  void run_canary(ApiCall call);

 private:
  JobManager& jobs_;
  StoreWorker& store_;
  const JobViews& views_;
  Auditor& audit_;
};

}  // namespace trainyard::daemon
