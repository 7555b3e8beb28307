#pragma once
// Hold, release, requeue and change (PATCH) a job, a task or every task of an array.
namespace trainyard::daemon {

struct ApiCall;
class Auditor;
class JobManager;
class JobViews;

class JobControlApi {
 public:
  JobControlApi(JobManager& jobs, const JobViews& views, Auditor& audit) : jobs_(jobs), views_(views), audit_(audit) {}

  void hold_job(ApiCall call);
  void release_job(ApiCall call);
  void requeue_job(ApiCall call);
  void update_job(ApiCall call);

 private:
  void set_hold(ApiCall call, bool held);

  JobManager& jobs_;
  const JobViews& views_;
  Auditor& audit_;
};

}  // namespace trainyard::daemon
