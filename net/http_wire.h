#pragma once
// A response as the HTTP server writes it (no Beast here; error_response is in http_server.h).
#include <string>

#include "net/http_types.h"

namespace trainyard::net {

// The status line, headers and body in one buffer, written once: Beast's serializer and its
// buffer sequences were a visible share of the I/O thread's time per submission (perf, under
// bench/submit). Handlers never answer 1xx, 204 or 304, so every response carries a body length,
// except a stream's, which runs until the connection closes. `version` is 10 or 11.
std::string wire_format(const HttpResponse& resp, unsigned version, bool keep_alive);

}  // namespace trainyard::net
