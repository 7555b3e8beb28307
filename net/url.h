#pragma once
// The one URL parser: the daemon's addresses for agents and the CLI (--server), the URLs it
// advertises, and webhooks. "http[s]://host[:port][/path][?query]": the scheme in either case, a
// host name or a bracketed IPv6 literal, an optional port (else the scheme's), and the path with
// its query. No user name or password, no fragment, no spaces or control characters anywhere.
#include <cstdint>
#include <string>
#include <string_view>

#include "proto/result.h"

namespace trainyard::net {

struct Url {
  std::string scheme;  // "http" or "https"
  std::string host;    // lower-case; an IPv6 literal without its brackets
  std::uint16_t port = 0;
  std::string path;  // with its query; "/" when absent
  bool tls() const { return scheme == "https"; }
  bool operator==(const Url&) const = default;
};

// Fails (invalid_input of `field`) naming what is wrong, without repeating the URL: a webhook's
// may carry its secret.
proto::Result<Url> read_url(std::string_view text, const std::string& field);

// read_url for a URL an operator typed (the agent's --server, the CLI's): throws
// trainyard::InvalidInput(field), quoting the URL.
Url parse_url(const std::string& text, const std::string& field);

}  // namespace trainyard::net
