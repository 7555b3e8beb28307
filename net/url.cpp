#include "net/url.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include "proto/errors.h"

namespace trainyard::net {
namespace {

constexpr std::size_t kMaxHostLength = 253;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool host_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.'; }

// Visible ASCII without spaces: what a request target may hold once percent-encoded.
bool target_char(char c) { return c > 0x20 && c < 0x7f && c != '#'; }

}  // namespace

proto::Result<Url> read_url(std::string_view text, const std::string& field) {
  const auto refused = [&](std::string problem) { return proto::Error::invalid_input(field, std::move(problem)); };
  Url url;
  const auto scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos) return refused("must start with http:// or https://");
  url.scheme = lower(text.substr(0, scheme_end));
  if (url.scheme != "http" && url.scheme != "https") return refused("scheme must be http or https, not '" + url.scheme + "'");
  std::string_view rest = text.substr(scheme_end + 3);
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  rest.remove_prefix(authority.size());
  if (authority.find('@') != std::string_view::npos) return refused("must not carry a user name or password");

  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with('[')) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return refused("unterminated IPv6 address");
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty() && !after.starts_with(':')) return refused("unexpected text after the IPv6 address");
    if (!after.empty()) port = after.substr(1);
    std::array<std::uint8_t, 16> bytes{};
    if (inet_pton(AF_INET6, std::string(host).c_str(), bytes.data()) != 1) return refused("invalid IPv6 address");
  } else {
    const auto colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
    }
    if (host.empty()) return refused("has no host");
    if (host.size() > kMaxHostLength) return refused("host is longer than 253 characters");
    if (!std::all_of(host.begin(), host.end(), host_name_char)) return refused("host holds characters a host name cannot");
  }
  url.host = lower(host);
  url.port = url.tls() ? 443 : 80;
  if (!port.empty() || authority.ends_with(':')) {
    unsigned value = 0;
    const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || error != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535) {
      return refused("port must be 1..65535");
    }
    url.port = static_cast<std::uint16_t>(value);
  }
  if (rest.find('#') != std::string_view::npos) return refused("must not carry a fragment");
  if (!std::all_of(rest.begin(), rest.end(), target_char)) return refused("path holds spaces or control characters");
  url.path = rest.empty() || rest.starts_with('?') ? "/" + std::string(rest) : std::string(rest);
  return url;
}

Url parse_url(const std::string& text, const std::string& field) {
  proto::Result<Url> url = read_url(text, field);
  if (!url) throw InvalidInput(field, url.error().message + " in \"" + text + "\"");
  return std::move(url).value();
}

}  // namespace trainyard::net
