#include "daemon/api/call.h"

#include <cstdint>

#include "daemon/api/query.h"

namespace trainyard {

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

std::int64_t ApiCall::id() const { return parse_int(param("id"), "id", 1, INT64_MAX); }

}  // namespace trainyard
