// The events log as the API reads it (daemon/events/events.h): GET /v1/events, its stream, and the audit log.
#include "daemon/api/events.h"
#include "daemon/api/call.h"
#include "daemon/api/paging.h"
#include "daemon/api/query.h"
#include "daemon/base/audit.h"
#include "daemon/base/store_worker.h"
#include "daemon/events/events.h"
#include "proto/errors.h"
#include "proto/flag_parser.h"
#include "proto/time_window.h"

namespace trainyard::daemon {

namespace {

// order, after, before and since of GET /v1/events; the cursor, when given, is where a walk goes on.
EventWalk event_walk(const net::HttpRequest& request, const PageRequest& page, TimePoint now) {
  EventWalk walk;
  const auto& query = request.query;
  if (auto order = query.find("order"); order != query.end()) {
    if (order->second == "newest") {
      walk.order = EventOrder::newest_first;
    } else if (order->second != "oldest") {
      throw InvalidInput("order", "must be oldest (the default) or newest");
    }
  }
  const bool newest_first = walk.order == EventOrder::newest_first;
  const std::optional<std::int64_t> after = query_int(request, "after");
  const std::optional<std::int64_t> before = query_int(request, "before");
  if (after && newest_first) throw InvalidInput("after", "reads oldest first; with order=newest give before");
  if (before && !newest_first) throw InvalidInput("before", "reads newest first; give it with order=newest");
  walk.from = page.after ? cursor_number(*page.after) : newest_first ? before.value_or(INT64_MAX) : after.value_or(0);
  if (auto since = query.find("since"); since != query.end()) walk.since = parse_time_bound(since->second, now, "since");
  return walk;
}

}  // namespace

void EventsApi::list_events(ApiCall call) {
  const EventFilter filter = parse_event_filter(call.request.query);
  const PageRequest page = page_request(call.request, "events", 100);
  const EventWalk walk = event_walk(call.request, page, clock_.system_now());
  const int limit = static_cast<int>(*page.limit);
  store_.read(
      [call, filter, walk, limit](store::Store& store) {
        EventPage found = read_events(store, call.who, filter, walk, limit);
        Json list = Json::array();
        for (const store::Event& e : found.events) list.push_back(event_json(e));
        const Json next = found.next ? Json(page_cursor(call.request, "events", std::to_string(*found.next))) : Json(nullptr);
        return std::function<void()>([call, body = Json{{"events", std::move(list)}, {"next", next}}] { call.reply(200, body); });
      },
      [call](const Error& error) { call.fail(error.during("could not read events")); });
}

void EventsApi::stream_events(ApiCall call) {
  EventFilter filter = parse_event_filter(call.request.query);
  std::optional<std::int64_t> after = query_int(call.request, "after");
  // What an EventSource sends when it reconnects: the id of the last event it had.
  if (const std::string last = call.request.header("last-event-id"); !last.empty()) {
    after = parse_integer("Last-Event-ID", last, 0, INT64_MAX);
  }
  net::HttpResponse response{200, "text/event-stream", "", {{"Cache-Control", "no-cache"}}};
  response.stream = streams_.subscribe(call.who, std::move(filter), after);
  (*call.respond)(std::move(response));
}

void EventsApi::list_audit(ApiCall call) {
  const PageRequest page = page_request(call.request, "audit", 100);
  const std::int64_t after = page.after ? cursor_number(*page.after) : query_int(call.request, "after").value_or(0);
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
