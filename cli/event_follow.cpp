#include "cli/event_follow.h"

#include <chrono>
#include <ostream>
#include <thread>

#include "cli/sse.h"
#include "cli/table.h"
#include "proto/backoff.h"
#include "proto/json_reader.h"

namespace trainyard::cli {
namespace {

// Jittered: every `events --follow` of a site reconnects when its daemon comes back.
constexpr BackoffPolicy kReconnect{std::chrono::milliseconds(1000), std::chrono::milliseconds(10'000), Jitter::equal};

HttpRequest stream_http(const ListEvents& command, const std::string& token, const std::string& last_id) {
  const ApiRequest api = command.stream_request();
  HttpRequest http{.method = api.method, .target = api.target};
  http.headers = {{"authorization", "Bearer " + token}, {"accept", "text/event-stream"}};
  if (!last_id.empty()) http.headers.emplace("last-event-id", last_id);
  return http;
}

}  // namespace

int follow_events(const ListEvents& command, const std::string& token, bool json, HttpClient& client,
                  const CliHost& host) {
  std::string last_id;
  bool connected_once = false;
  Backoff reconnect(kReconnect);
  for (;;) {
    SseParser parser;
    bool got_answer = false;
    const auto print = [&](std::string_view piece) {
      got_answer = true;
      for (const SseEvent& event : parser.feed(piece)) {
        Json data;
        try {
          data = parse_json_text(event.data);
        } catch (const InvalidInput&) {
          continue;  // not one of ours: nothing to show
        }
        host.out << (json ? data.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n"
                          : terminal_safe(ListEvents::render_line(data)))
                 << std::flush;
        if (!event.id.empty()) last_id = event.id;
      }
      return true;
    };
    const HttpResult result = client.stream(stream_http(command, token, last_id), print);
    const HttpResponse* response = result ? &*result : nullptr;
    if (response && response->status / 100 != 2) {
      host.err << "trainyard: " << terminal_safe(error_message(response->status, response->body)) << "\n";
      return kExitFailed;
    }
    const std::string why = response ? "the daemon ended the stream" : result.error().message;
    if (!connected_once && !response && !got_answer) {
      host.err << "trainyard: " << terminal_safe(why) << "\n";
      return kExitFailed;
    }
    connected_once = true;
    if (got_answer) reconnect.after_success();
    const std::chrono::milliseconds retry_in = reconnect.after_failure();
    host.err << "trainyard: " << terminal_safe(why) << "; reconnecting in " << retry_in.count() << " ms"
             << (last_id.empty() ? "" : " after event " + last_id) << "\n";
    std::this_thread::sleep_for(retry_in);
  }
}

}  // namespace trainyard::cli
