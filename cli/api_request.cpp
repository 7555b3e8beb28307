#include "cli/api_request.h"

#include "net/http_types.h"

namespace trainyard::cli {

Target& Target::param(std::string_view key, const std::optional<std::string>& value) {
  if (value) params_.emplace_back(std::string(key), *value);
  return *this;
}

std::string Target::str() const {
  std::string out = path_;
  char separator = '?';
  for (const auto& [key, value] : params_) {
    out += separator + net::percent_encode(key) + "=" + net::percent_encode(value);
    separator = '&';
  }
  return out;
}

}  // namespace trainyard::cli
