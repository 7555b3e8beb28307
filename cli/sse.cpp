#include "cli/sse.h"

namespace trainyard::cli {

std::vector<SseEvent> SseParser::feed(std::string_view piece) {
  std::vector<SseEvent> out;
  partial_line_ += piece;
  std::size_t start = 0;
  for (std::size_t end; (end = partial_line_.find('\n', start)) != std::string::npos; start = end + 1) {
    std::string_view line(partial_line_.data() + start, end - start);
    if (line.ends_with('\r')) line.remove_suffix(1);
    take_line(line, out);
  }
  partial_line_.erase(0, start);
  return out;
}

void SseParser::take_line(std::string_view line, std::vector<SseEvent>& out) {
  if (line.empty()) {
    if (has_data_) out.push_back(std::move(event_));
    event_ = {};
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;
  const auto colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view{} : line.substr(colon + 1);
  if (value.starts_with(' ')) value.remove_prefix(1);
  if (field == "id") {
    event_.id = value;
  } else if (field == "event") {
    event_.type = value;
  } else if (field == "data") {
    if (has_data_) event_.data += '\n';
    event_.data += value;
    has_data_ = true;
  }
}

}  // namespace trainyard::cli
