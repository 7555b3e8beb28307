#pragma once
// The audit log (docs/DESIGN.md "Security"): every change made through the API is an event of kind
// "audit.<action>" saying who (user, role), from where (remote address) and what (route, target,
// request fields). Stored as events: the message is one line, the details hold the rest. Never holds a secret:
// callers pass only the fields that name what changed.
#include <functional>
#include <string>

#include "daemon/base/auth.h"
#include "store/store.h"

namespace trainyard::daemon {

inline constexpr const char* kAuditKindPrefix = "audit.";

struct AuditRecord {
  std::string action;  // "job.submitted", "node.drained", ...; the event kind without "audit."
  std::string route;   // "POST /v1/nodes/n1/drain"
  std::string target;  // the job id, node, token id or share name changed
  Json details = Json::object();
};

// A change's audit record, built once the change knows its target (a new job's id): whoever commits
// the change appends it to that same Change, so nothing is ever changed without its record.
using AuditOf = std::function<store::Event(const std::string& target)>;

store::Event audit_event(const Principal& who, const std::string& remote, TimePoint at, AuditRecord what);
// An audit event as GET /v1/audit lists it.
Json audit_json(const store::Event& event);

}  // namespace trainyard::daemon
