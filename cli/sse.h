#pragma once
// Server-Sent Events framing (the WHATWG "event stream" format) read from a body that arrives in
// pieces cut anywhere: `id:`, `event:` and `data:` fields, comments (`: keep-alive`) skipped, an
// event dispatched at its blank line. Pure: `trainyard events --follow` feeds it what it reads.
#include <string>
#include <string_view>
#include <vector>

namespace trainyard::cli {

struct SseEvent {
  std::string id;    // "" when the event named none
  std::string type;  // "" when it named none (what an EventSource calls "message")
  std::string data;  // its data lines joined with '\n'
  bool operator==(const SseEvent&) const = default;
};

class SseParser {
 public:
  // The events completed by `piece`, in order.
  std::vector<SseEvent> feed(std::string_view piece);

 private:
  void take_line(std::string_view line, std::vector<SseEvent>& out);

  std::string partial_line_;
  SseEvent event_;
  bool has_data_ = false;
};

}  // namespace trainyard::cli
