#include "cli/flags.h"
#include "cli/http_client.h"
#include "proto/errors.h"

namespace trainyard::cli {

ServerUrl parse_server_url(const std::string& text) {
  std::string_view rest = text;
  bool tls = false;
  if (const auto scheme_end = rest.find("://"); scheme_end != std::string_view::npos) {
    const std::string_view scheme = rest.substr(0, scheme_end);
    if (scheme != "http" && scheme != "https") {
      throw InvalidInput("--server", "must start with http:// or https://, got \"" + text + "\"");
    }
    tls = scheme == "https";
    rest.remove_prefix(scheme_end + 3);
  }
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos) {
    throw InvalidInput("--server", "must be http[s]://HOST:PORT without a path, got \"" + text + "\"");
  }
  ServerUrl url{.host = "", .port = tls ? "443" : "80", .text = text, .tls = tls, .trust = {}};
  std::string_view port;
  if (rest.starts_with('[')) {  // [IPv6]:port
    const auto close = rest.find(']');
    if (close == std::string_view::npos) throw InvalidInput("--server", "unclosed '[' in \"" + text + "\"");
    url.host = std::string(rest.substr(1, close - 1));
    rest.remove_prefix(close + 1);
    if (!rest.empty() && rest.front() != ':') throw InvalidInput("--server", "expected ':' after ']' in \"" + text + "\"");
    if (!rest.empty()) port = rest.substr(1);
  } else {
    const auto colon = rest.rfind(':');
    url.host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) port = rest.substr(colon + 1);
  }
  if (url.host.empty()) throw InvalidInput("--server", "has no host in \"" + text + "\"");
  if (!port.empty() || rest.ends_with(':')) {
    try {
      url.port = std::to_string(parse_integer("--server", port, 1, 65535));
    } catch (const InvalidInput&) {
      throw InvalidInput("--server", "port must be 1..65535 in \"" + text + "\"");
    }
  }
  return url;
}

}  // namespace trainyard::cli
