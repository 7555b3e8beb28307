// One header of an HTTP response the daemon's handlers built, or "" when it has none.
#pragma once

#include <string>

#include "net/http_types.h"

namespace trainyard::daemon::testing {

inline std::string response_header(const net::HttpResponse& response, const std::string& name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return "";
}

}  // namespace trainyard::daemon::testing
