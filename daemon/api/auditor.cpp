// Writing a change's record into the audit log.
#include "daemon/api/auditor.h"
#include "daemon/api/call.h"
#include "daemon/job_manager.h"

namespace trainyard::daemon {

store::Event Auditor::event(const ApiCall& call, AuditRecord what) const {
  return trainyard::daemon::audit_event(call.who, call.request.remote, clock_.system_now(), std::move(what));
}

AuditOf Auditor::of(const ApiCall& call, std::string action, Json details) const {
  return [this, who = call.who, remote = call.request.remote, route = call.route(), action = std::move(action),
          details = std::move(details)](const std::string& target) {
    return trainyard::daemon::audit_event(who, remote, clock_.system_now(), {action, route, target, details});
  };
}

void Auditor::write(const ApiCall& call, AuditRecord what) {
  store::Change change;
  change.events.push_back(event(call, std::move(what)));
  jobs_.record(std::move(change));
}

}  // namespace trainyard::daemon
