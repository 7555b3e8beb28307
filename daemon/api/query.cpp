#include "daemon/api/query.h"

#include "proto/errors.h"
#include "proto/flag_parser.h"

namespace trainyard::daemon {

std::optional<std::int64_t> query_int(const net::HttpRequest& req, const std::string& name) {
  auto it = req.query.find(name);
  if (it == req.query.end()) return std::nullopt;
  return parse_integer(name, it->second, INT64_MIN, INT64_MAX);
}

std::chrono::hours query_window(const net::HttpRequest& req, std::chrono::hours fallback, std::chrono::hours longest) {
  const auto it = req.query.find("window");
  if (it == req.query.end()) return fallback;
  const std::string& text = it->second;
  const char unit = text.empty() ? '\0' : text.back();
  if (unit != 'h' && unit != 'd') throw InvalidInput("window", "must be a number of hours or days, e.g. 24h or 7d");
  const std::int64_t per_unit = unit == 'd' ? 24 : 1;
  const std::int64_t count = parse_integer("window", text.substr(0, text.size() - 1), 1, longest.count() / per_unit);
  return std::chrono::hours(count * per_unit);
}

}  // namespace trainyard::daemon
