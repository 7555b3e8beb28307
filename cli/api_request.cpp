#include "cli/api_request.h"

namespace trainyard::cli {

std::string url_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const bool unreserved = (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') ||
                            u == '-' || u == '.' || u == '_' || u == '~';
    if (unreserved) {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 0xF];
    }
  }
  return out;
}

Target& Target::param(std::string_view key, const std::optional<std::string>& value) {
  if (value) params_.emplace_back(std::string(key), *value);
  return *this;
}

std::string Target::str() const {
  std::string out = path_;
  char separator = '?';
  for (const auto& [key, value] : params_) {
    out += separator + url_encode(key) + "=" + url_encode(value);
    separator = '&';
  }
  return out;
}

}  // namespace trainyard::cli
