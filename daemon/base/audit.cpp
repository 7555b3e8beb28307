#include "daemon/base/audit.h"

#include "proto/json_reader.h"
#include "proto/time.h"

namespace trainyard::daemon {

store::Event audit_event(const Principal& who, const std::string& remote, TimePoint at, AuditRecord what) {
  store::Event e;
  e.at = at;
  e.kind = kAuditKindPrefix + what.action;
  e.severity = store::Severity::info;  // a deliberate change; what it caused has its own event
  e.user = who.user;
  e.message = who.user + " (" + to_string(who.role) + ") " + what.route + ": " + what.action + " " + what.target;
  e.details = {{"user", who.user},
               {"role", to_string(who.role)},
               {"remote", remote},
               {"route", std::move(what.route)},
               {"target", std::move(what.target)},
               {"details", std::move(what.details)}};
  return e;
}

Json audit_json(const store::Event& event) {
  Json j = {{"id", event.seq}, {"at", format_time(event.at)}, {"action", event.kind.substr(std::string(kAuditKindPrefix).size())}};
  // Records written before events had details (schema 7) kept them as the message's JSON.
  j.update(event.details.empty() ? parse_json_text(event.message) : event.details);
  return j;
}

}  // namespace trainyard::daemon
