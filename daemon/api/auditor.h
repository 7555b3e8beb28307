#pragma once
// How handlers record a change in the audit log (daemon/base/audit.h): written in the same store change
// as what it records (`event`, or `of` for a change the job manager commits), or on its own once
// the change succeeded (`write`).
#include <string>

#include "daemon/base/audit.h"
#include "proto/time.h"

namespace trainyard::daemon {

struct ApiCall;
class StoreWorker;

class Auditor {
 public:
  Auditor(StoreWorker& store, const TimeSource& clock) : store_(store), clock_(clock) {}

  // The audit event of the change `call` made.
  store::Event event(const ApiCall& call, AuditRecord what) const;
  // The same for a change whose target the job manager names when it commits (a new job's id).
  AuditOf of(const ApiCall& call, std::string action, Json details) const;
  void write(const ApiCall& call, AuditRecord what);

 private:
  StoreWorker& store_;
  const TimeSource& clock_;
};

}  // namespace trainyard::daemon
