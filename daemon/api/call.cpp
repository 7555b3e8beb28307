#include "daemon/api/call.h"

#include <cstdint>

#include "proto/flag_parser.h"

namespace trainyard::daemon {

const std::string& ApiCall::param(std::string_view name) const {
  std::size_t index = 0;
  std::size_t at = 1;
  for (;;) {
    const std::size_t end = std::min(matched->pattern.find('/', at), matched->pattern.size());
    const std::string_view part = matched->pattern.substr(at, end - at);
    if (part.size() == name.size() + 2 && part.substr(1, name.size()) == name) return request.segments.at(index);
    if (end == matched->pattern.size()) throw std::logic_error("route has no parameter " + std::string(name));
    ++index;
    at = end + 1;
  }
}

namespace {

int http_status(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_input:
      return 400;
    case ErrorCode::unauthorized:
      return 401;
    case ErrorCode::forbidden:
      return 403;
    case ErrorCode::not_found:
      return 404;
    case ErrorCode::conflict:
      return 409;
    case ErrorCode::too_many_pending:
      return 429;
    case ErrorCode::unavailable:
      return 503;
    case ErrorCode::internal:
      return 500;
  }
  return 500;
}

}  // namespace

void ApiCall::fail(const Error& error) const {
  // An invalid field is named in the message too, as a thrown InvalidInput names it (what the CLI shows).
  const bool names_field = error.code == ErrorCode::invalid_input && !error.field.empty();
  fail(http_status(error.code), std::string(to_string(error.code)), names_field ? error.field + ": " + error.message : error.message,
       error.field);
}

std::int64_t ApiCall::id() const { return parse_integer("id", param("id"), 1, INT64_MAX); }

}  // namespace trainyard::daemon
