#pragma once
// Whole numbers and windows from query parameters, validated at the boundary: anything else throws
// InvalidInput naming the parameter, which the dispatcher answers with a 400. Path segments and
// other single values are read with proto's parse_integer (proto/flag_parser.h).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "net/http_types.h"

namespace trainyard::daemon {

// The query parameter `name` as a whole number, if given. The dispatcher has already held it to its
// route's range (QueryParam in daemon/api/routes.h), so the range is declared in one place.
std::optional<std::int64_t> query_int(const net::HttpRequest& req, const std::string& name);

// The query parameter `window`: a whole number of hours or days ("24h", "7d"), up to `longest`;
// `fallback` when it is not given.
std::chrono::hours query_window(const net::HttpRequest& req, std::chrono::hours fallback, std::chrono::hours longest);

}  // namespace trainyard::daemon
