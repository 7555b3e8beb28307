#pragma once
// HTTP requests and responses as plain values, so routing and handlers are pure functions that
// tests call without a socket (STYLE.md #8). Beast stays inside net/*.cpp.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainyard::net {

// The certificate a TLS client presented, checked against the server's client CA.
struct PeerCertificate {
  bool verified = false;      // issued by the client CA and valid now
  std::string verify_error;   // why not, when not
  std::string common_name;    // the subject's CN
  std::vector<std::string> dns_names;  // its DNS subject alternative names
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // as sent: path plus query
  std::string path;    // the path as sent, without the query (not decoded: for messages and exact routes)
  std::vector<std::string> segments;           // the path split at '/', then each part decoded
  std::map<std::string, std::string> query;    // decoded query parameters (last one wins)
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string remote;  // peer address, for logs
  std::optional<PeerCertificate> peer_certificate;  // over TLS, when the client presented one

  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// Fills the request's path, segments and query from its target. The path is split at '/' before
// its parts are decoded, so an encoded slash never routes as a separator (/v1%2Fnodes is not
// /v1/nodes). Returns what is wrong with the target, "" when nothing: no leading '/', a bad
// %-escape, an empty segment ("//" or a trailing '/': each resource has one spelling) or an
// encoded '/' in a segment.
std::string parse_target(HttpRequest& request);
std::string percent_decode(std::string_view in, bool plus_is_space, bool& ok);
std::string percent_encode(std::string_view in);

struct Url {
  std::string scheme;  // "http" or "https"
  std::string host;
  std::string port;
  std::string path;  // "/" when absent
};
// Parses "http[s]://host[:port][/path]" (IPv6 hosts in brackets; the port defaults to the
// scheme's): the agent's --server and the CLI's. Throws trainyard::InvalidInput(field) naming
// what is wrong.
Url parse_url(const std::string& text, const std::string& field);

}  // namespace trainyard::net
