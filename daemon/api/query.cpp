#include "daemon/api/query.h"

#include <charconv>

#include "proto/errors.h"

namespace trainyard::daemon {

std::int64_t parse_int(const std::string& text, const std::string& field, std::int64_t min, std::int64_t max) {
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < min || v > max) {
    throw InvalidInput(field, "must be an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                                  ", got \"" + text + "\"");
  }
  return v;
}

std::optional<std::int64_t> query_int(const net::HttpRequest& req, const std::string& name) {
  auto it = req.query.find(name);
  if (it == req.query.end()) return std::nullopt;
  return parse_int(it->second, name, INT64_MIN, INT64_MAX);
}

std::chrono::hours query_window(const net::HttpRequest& req, std::chrono::hours fallback, std::chrono::hours longest) {
  const auto it = req.query.find("window");
  if (it == req.query.end()) return fallback;
  const std::string& text = it->second;
  const char unit = text.empty() ? '\0' : text.back();
  if (unit != 'h' && unit != 'd') throw InvalidInput("window", "must be a number of hours or days, e.g. 24h or 7d");
  const std::int64_t per_unit = unit == 'd' ? 24 : 1;
  const std::int64_t count = parse_int(text.substr(0, text.size() - 1), "window", 1, longest.count() / per_unit);
  return std::chrono::hours(count * per_unit);
}

}  // namespace trainyard::daemon
