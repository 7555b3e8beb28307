#pragma once
// /v1/shares: the fair-share table, and creating, changing or deleting a share.
#include "proto/time.h"

namespace trainyard::daemon {

struct ApiCall;
class Auditor;
class JobManager;

class SharesApi {
 public:
  SharesApi(JobManager& jobs, Auditor& audit, const TimeSource& clock) : jobs_(jobs), audit_(audit), clock_(clock) {}

  void list_shares(ApiCall call);
  void put_share(ApiCall call);
  void delete_share(ApiCall call);

 private:
  JobManager& jobs_;
  Auditor& audit_;
  const TimeSource& clock_;
};

}  // namespace trainyard::daemon
