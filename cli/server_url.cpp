#include "cli/http_client.h"
#include "net/server_list.h"
#include "net/url.h"
#include "proto/errors.h"

namespace trainyard::cli {

ServerUrl parse_server_url(const std::string& text) {
  const bool has_scheme = text.find("://") != std::string::npos;
  const net::Url url = net::parse_url(has_scheme ? text : "http://" + text, "--server");
  if (url.path != "/") throw InvalidInput("--server", "must be http[s]://HOST:PORT without a path, got \"" + text + "\"");
  return ServerUrl{.host = url.host, .port = std::to_string(url.port), .text = text, .tls = url.scheme == "https", .trust = {}};
}

std::vector<ServerUrl> parse_server_urls(const std::string& text) {
  std::vector<ServerUrl> servers;
  for (const auto& url : net::split_server_list(text, "--server")) servers.push_back(parse_server_url(url));
  return servers;
}

}  // namespace trainyard::cli
