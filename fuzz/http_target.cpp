// The request-target parser that runs before the route table: any target is either refused with
// a reason or split into a path, decoded segments and a query, with no segment empty or holding '/'.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "net/http_types.h"

using namespace trainyard::net;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  HttpRequest request;
  request.method = "GET";
  request.target.assign(reinterpret_cast<const char*>(data), size);
  if (!parse_target(request)) return 0;
  if (request.path.empty() || request.path[0] != '/') std::abort();
  for (const std::string& segment : request.segments) {
    if (segment.empty() || segment.find('/') != std::string::npos) std::abort();
  }
  // Every decoded segment, encoded again, decodes back to itself.
  for (const std::string& segment : request.segments) {
    bool ok = false;
    if (percent_decode(percent_encode(segment), false, ok) != segment || !ok) std::abort();
  }
  return 0;
}
