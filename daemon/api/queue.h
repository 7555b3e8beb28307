#pragma once
// GET /v1/queue: the pending queue in the scheduler's order, paged by position.
namespace trainyard::daemon {

struct ApiCall;
class JobManager;
class JobViews;

class QueueApi {
 public:
  QueueApi(const JobManager& jobs, const JobViews& views) : jobs_(jobs), views_(views) {}

  void list_queue(ApiCall call);

 private:
  const JobManager& jobs_;
  const JobViews& views_;
};

}  // namespace trainyard::daemon
