// The audit log: writing a change's record, and reading the log.
#include <spdlog/spdlog.h>

#include "daemon/api.h"
#include "daemon/api/call.h"
#include "daemon/api/paging.h"
#include "daemon/api/query.h"

namespace trainyard::daemon {

store::Event Api::audit_event(const ApiCall& call, AuditRecord what) const {
  return trainyard::daemon::audit_event(call.who, call.request.remote, clock_.system_now(), std::move(what));
}

AuditOf Api::audit_of(const ApiCall& call, std::string action, Json details) const {
  return [this, who = call.who, remote = call.request.remote, route = call.route(), action = std::move(action),
          details = std::move(details)](const std::string& target) {
    return trainyard::daemon::audit_event(who, remote, clock_.system_now(), {action, route, target, details});
  };
}

void Api::audit(const ApiCall& call, AuditRecord what) {
  store::Change change;
  change.events.push_back(audit_event(call, std::move(what)));
  const std::string kind = change.events.back().kind;
  store_.write(std::move(change), [kind, by = call.who.user](const Result<void>& written, store::Change&) {
    // The change itself is done and answered; only its record is missing.
    if (!written) spdlog::error("event=audit_write_failed kind={} by={}", kind, by);
  });
}

void Api::list_audit(ApiCall call) {
  const PageRequest page = page_request(call.request, "audit", 100);
  const std::int64_t after =
      page.after ? cursor_number(*page.after) : query_int(call.request, "after").value_or(0);
  const int limit = static_cast<int>(*page.limit);
  store_.read(
      [call, after, limit](store::Store& store) {
        auto found = store.events_of_kind(kAuditKindPrefix, after, limit + 1);
        Json next = nullptr;
        if (std::ssize(found) > limit) {
          found.pop_back();
          next = page_cursor(call.request, "audit", std::to_string(found.back().seq));
        }
        Json list = Json::array();
        for (const store::Event& e : found) list.push_back(audit_json(e));
        return std::function<void()>([call, body = Json{{"events", list}, {"next", next}}] { call.reply(200, body); });
      },
      [call](const Error& error) { call.fail(error.during("could not read the audit log")); });
}

}  // namespace trainyard::daemon
