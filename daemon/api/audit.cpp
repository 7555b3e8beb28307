// The audit log: writing a change's record, and reading the log.
#include <spdlog/spdlog.h>

#include "daemon/api.h"
#include "daemon/api/call.h"
#include "daemon/api/query.h"

namespace trainyard {

Event Api::audit_event(const ApiCall& call, AuditRecord what) const {
  return trainyard::audit_event(call.who, call.request.remote, clock_.system_now(), std::move(what));
}

AuditOf Api::audit_of(const ApiCall& call, std::string action, Json details) const {
  return [this, who = call.who, remote = call.request.remote, route = call.route(), action = std::move(action),
          details = std::move(details)](const std::string& target) {
    return trainyard::audit_event(who, remote, clock_.system_now(), {action, route, target, details});
  };
}

void Api::audit(const ApiCall& call, AuditRecord what) {
  Change change;
  change.events.push_back(audit_event(call, std::move(what)));
  const std::string kind = change.events.back().kind;
  store_.write(std::move(change), [kind, by = call.who.user](const Result<void>& written, Change&) {
    // The change itself is done and answered; only its record is missing.
    if (!written) spdlog::error("event=audit_write_failed kind={} by={}", kind, by);
  });
}

void Api::list_audit(ApiCall call) {
  const std::int64_t after = query_int(call.request, "after", 0, INT64_MAX).value_or(0);
  const int limit = static_cast<int>(query_int(call.request, "limit", 1, 1000).value_or(100));
  store_.read(
      [call, after, limit](Store& store) {
        const auto found = store.events_of_kind(kAuditKindPrefix, after, limit);
        Json list = Json::array();
        for (const Event& e : found) list.push_back(audit_json(e));
        Json next = nullptr;
        if (static_cast<int>(found.size()) == limit) next = std::to_string(found.back().seq);
        return std::function<void()>([call, body = Json{{"events", list}, {"next", next}}] { call.reply(200, body); });
      },
      [call](const Error& error) { call.fail(error.during("could not read the audit log")); });
}

}  // namespace trainyard
