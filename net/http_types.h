#pragma once
// HTTP requests and responses as plain values, so routing and handlers are pure functions that
// tests call without a socket (docs/STYLE.md "Pure policy"). Beast stays inside net/*.cpp.
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proto/result.h"

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

// The body of a response that goes on as it comes (Server-Sent Events). The handler keeps it and
// pushes text; the connection writes what is queued, and ends when the stream is closed (by the
// handler or the server's shutdown) or a write fails. Both sides use it on the io thread only.
class ResponseStream {
 public:
  // Queued text is shared, not copied: one batch of events goes to many clients as one string.
  using Chunk = std::shared_ptr<const std::string>;

  explicit ResponseStream(std::size_t buffer_limit) : buffer_limit_(buffer_limit) {}
  // Queues `text`; false when it is closed, or when what is queued and unwritten would pass the
  // limit (a client that does not read): then it closes, so it never holds more than the limit.
  bool push(Chunk text);
  bool push(std::string_view text) { return push(std::make_shared<const std::string>(text)); }
  void close();
  bool closed() const { return closed_; }

  // Calls `then` once, when the connection has written everything pushed before it and asks for
  // more: a producer with much to send (a far-behind event stream) sends a page at a time.
  // The wake lets an idle connection ask at once.
  void when_drained(std::function<void()> then) {
    drained_ = std::move(then);
    wake();
  }

  // The connection's side: takes everything queued, in order (written with one gathering write),
  // and is called whenever text or the close comes.
  std::vector<Chunk> take() {
    if (queued_.empty() && drained_ && !closed_) std::exchange(drained_, nullptr)();
    queued_bytes_ = 0;
    return std::exchange(queued_, {});
  }
  void on_ready(std::function<void()> wake) { wake_ = std::move(wake); }

 private:
  void wake() const {
    if (wake_) wake_();
  }
  std::size_t buffer_limit_;
  std::vector<Chunk> queued_;
  std::size_t queued_bytes_ = 0;
  bool closed_ = false;
  std::function<void()> wake_;
  std::function<void()> drained_;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // Set: the body is this stream's text (no length; the connection closes at its end), not `body`.
  std::shared_ptr<ResponseStream> stream;
};

// Fills the request's path, segments and query from its target. The path is split at '/' before
// its parts are decoded, so an encoded slash never routes as a separator (/v1%2Fnodes is not
// /v1/nodes). Fails (invalid_input of "path") on what is wrong with the target: no leading '/', a
// bad %-escape, an empty segment ("//" or a trailing '/': each resource has one spelling) or an
// encoded '/' in a segment.
Result<void> parse_target(HttpRequest& request);
std::string percent_decode(std::string_view in, bool plus_is_space, bool& ok);

// A request's header fields (name, value), as sent, checked for what no request may carry, before
// its body is read: a second Authorization or Host (which one would count?), and framing that a
// proxy in front could read otherwise than this server does (request smuggling, RFC 9112 §6.1 and
// §6.3): a Transfer-Encoding other than exactly `chunked`, given once, or one beside a
// Content-Length. Fails with invalid_input naming the header field (lower-cased).
using HeaderFields = std::vector<std::pair<std::string_view, std::string_view>>;
Result<void> check_request_fields(const HeaderFields& fields);
std::string percent_encode(std::string_view in);

}  // namespace trainyard::net
