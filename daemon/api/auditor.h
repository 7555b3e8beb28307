#pragma once
// How handlers record a change in the audit log (daemon/base/audit.h): written in the same store change
// as what it records (`event`, or `of` for a change the job manager commits), or, for what is done
// without a stored change (a health check started, faults sent to an agent), on its own after it
// (`write`), as the daemon's own change: a store that fails delays the record, never loses it.
#include <string>

#include "daemon/base/audit.h"
#include "proto/time.h"

namespace trainyard::daemon {

struct ApiCall;
class JobManager;

class Auditor {
 public:
  Auditor(JobManager& jobs, const TimeSource& clock) : jobs_(jobs), clock_(clock) {}

  // The audit event of the change `call` made.
  store::Event event(const ApiCall& call, AuditRecord what) const;
  // The same for a change whose target the job manager names when it commits (a new job's id).
  AuditOf of(const ApiCall& call, std::string action, Json details) const;
  void write(const ApiCall& call, AuditRecord what);

 private:
  JobManager& jobs_;
  const TimeSource& clock_;
};

}  // namespace trainyard::daemon
