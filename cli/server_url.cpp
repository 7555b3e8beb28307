#include "cli/http_client.h"
#include "proto/errors.h"

namespace trainyard::cli {

ServerUrl parse_server_url(const std::string& text) {
  const bool has_scheme = text.find("://") != std::string::npos;
  const net::Url url = net::parse_url(has_scheme ? text : "http://" + text, "--server");
  if (url.path != "/") throw InvalidInput("--server", "must be http[s]://HOST:PORT without a path, got \"" + text + "\"");
  return ServerUrl{.host = url.host, .port = url.port, .text = text, .tls = url.scheme == "https", .trust = {}};
}

}  // namespace trainyard::cli
