// The events log as the API reads it (daemon/events.h): GET /v1/events and its stream.
#include "daemon/api.h"
#include "daemon/api/call.h"
#include "daemon/api/paging.h"
#include "daemon/api/query.h"
#include "daemon/events.h"

namespace trainyard::daemon {

void Api::list_events(ApiCall call) {
  const EventFilter filter = parse_event_filter(call.request.query);
  const PageRequest page = page_request(call.request, "events", 100, 1000);
  // `after` is where a walk starts (an event id, as the stream takes it); the cursor where it goes on.
  const std::int64_t after =
      page.after ? cursor_number(*page.after) : query_int(call.request, "after", 0, INT64_MAX).value_or(0);
  const int limit = static_cast<int>(*page.limit);
  store_.read(
      [call, filter, after, limit](store::Store& store) {
        EventPage found = read_events(store, call.who, filter, after, limit);
        Json list = Json::array();
        for (const store::Event& e : found.events) list.push_back(event_json(e));
        const Json next = found.next ? Json(page_cursor(call.request, "events", std::to_string(*found.next))) : Json(nullptr);
        return std::function<void()>([call, body = Json{{"events", std::move(list)}, {"next", next}}] { call.reply(200, body); });
      },
      [call](const Error& error) { call.fail(error.during("could not read events")); });
}

void Api::stream_events(ApiCall call) {
  EventFilter filter = parse_event_filter(call.request.query);
  std::optional<std::int64_t> after = query_int(call.request, "after", 0, INT64_MAX);
  // What an EventSource sends when it reconnects: the id of the last event it had.
  if (const std::string last = call.request.header("last-event-id"); !last.empty()) {
    after = parse_int(last, "Last-Event-ID", 0, INT64_MAX);
  }
  net::HttpResponse response{200, "text/event-stream", "", {{"Cache-Control", "no-cache"}}};
  response.stream = event_streams_.subscribe(call.who, std::move(filter), after);
  (*call.respond)(std::move(response));
}

}  // namespace trainyard::daemon
