#pragma once
// The daemon's one port: HTTP/1.1 with keep-alive for the REST API and dashboard, and WebSocket
// upgrades for agents, path-routed; optionally all over TLS (HTTPS and wss). One coroutine per
// connection (Beast's awaitable server): after the TLS handshake, read with a timeout, hand the
// request to the handler, write, keep alive.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "net/accept_policy.h"
#include "net/http_types.h"
#include "net/tls.h"
#include "net/websocket.h"
#include "proto/result.h"

namespace boost::asio {
class io_context;
}

namespace trainyard::net {

// Handlers answer through `respond`, possibly later (after a store commit); they must call it
// exactly once, on the io thread.
using HttpResponder = std::function<void(HttpResponse)>;
using HttpHandler = std::function<void(HttpRequest, HttpResponder)>;
// Who a request's Authorization header value says its sender is (nullopt: nobody the application
// knows), asked once its header is in: connections are counted by caller from then on
// (ConnectionLimits).
using CallerOf = std::function<std::optional<Caller>(std::string_view authorization)>;

struct HttpServerOptions {
  std::size_t body_limit = 1 << 20;                 // larger bodies get 413
  std::size_t header_limit = 16 << 10;              // larger request headers (line and fields) get 431
  std::chrono::seconds idle_timeout{60};            // a silent keep-alive connection is closed
  // From a request's first byte to the end of its header, then for its whole body: a client that
  // trickles bytes (slow loris) is disconnected however steadily it sends.
  std::chrono::milliseconds header_timeout{10'000};
  std::chrono::milliseconds body_timeout{60'000};
  // Agents' messages; their largest, a log reply, is at most 1 MiB of bytes escaped in JSON.
  std::size_t websocket_message_limit = 8 << 20;
  // Open connections, WebSockets included (ConnectionLimits): at an anonymous cap the oldest
  // connection waiting silently gives way; one refused is answered 503 or 429 with Retry-After (over
  // plain HTTP) and closed. A new connection's first request header must be in within the header
  // timeout of the accept (the TLS handshake included), so a silent one is dropped that soon.
  ConnectionCaps caps;
  // Waits after a failed accept (e.g. out of descriptors), doubling from the first to the ceiling.
  std::chrono::milliseconds accept_backoff_first{50};
  std::chrono::milliseconds accept_backoff_ceiling{1000};
  // Accept failures and refused connections are each logged at most once per interval.
  std::chrono::milliseconds log_interval{5000};
  // Certificate and key (and the agents' client CA) for HTTPS and wss; none: plain HTTP.
  TlsServerFiles tls;
};

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, HttpServerOptions options, HttpHandler handler,
             std::vector<WebSocketRoute> websocket_routes);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // How requests name their callers; until set, every connection counts as anonymous.
  void identify_callers(CallerOf caller_of);
  // Binds and starts accepting; port 0 picks a free port. Returns the bound port.
  unsigned short listen(const std::string& host, unsigned short port);
  // Loads the TLS files again for connections accepted from now on; open ones keep what they
  // began with. Fails with why the files cannot be used (invalid_input naming the flag): the old
  // ones then stay.
  Result<void> reload_tls();
  // Graceful shutdown, first step: stops accepting (new connections are refused) and closes
  // idle keep-alive connections; requests already read are still answered, each on a connection
  // then closed. WebSockets stay open, since answers may wait on an agent (a log fetch).
  // Returns the idle connections closed.
  std::size_t stop_accepting();
  // Graceful shutdown, second step: closes every WebSocket with 1001 "going away" and `reason`.
  // Returns how many were told.
  std::size_t tell_websockets_going_away(const std::string& reason);
  // Requests read whose answer is not yet written, and WebSockets not yet closed.
  std::size_t requests_in_flight() const;
  std::size_t websockets_open() const;
  // Stops accepting and closes every open connection.
  void stop();

 private:
  friend struct HttpServerTesting;  // net/http_server_testing.h
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// A JSON error body in the API's shape: {"error":{"code":..,"message":..,"field":..}}.
HttpResponse error_response(int status, const std::string& code, const std::string& message,
                            const std::string& field = "");

}  // namespace trainyard::net
