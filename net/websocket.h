#pragma once
// WebSocket endpoints as plain interfaces, so the agent gateway and the agent's daemon link are
// testable with fakes and Beast stays inside net/*.cpp.
//
// Threading contract: every call below happens on the io_context's thread (the processes run one
// I/O thread), and implementations may call back into the peer from inside these callbacks.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "net/http_types.h"

namespace trainyard::net {

// The sending half of an open WebSocket. Messages are queued and written in order.
class WebSocketPeer {
 public:
  virtual ~WebSocketPeer() = default;
  virtual void send(std::string text) = 0;
  // Closes after queued messages are written; the session then gets `on_closed`.
  virtual void close(std::string reason) = 0;
  // Drops the connection at once, queued messages and the closing handshake with it: for a peer
  // that stopped answering, which would never complete a handshake. The session then gets
  // `on_closed` (on the client side with `reason`), never from inside this call.
  virtual void abort(std::string reason) = 0;
};

// The receiving half, implemented by the application.
class WebSocketSession {
 public:
  virtual ~WebSocketSession() = default;
  virtual void on_message(std::string text) = 0;
  // Called once when the connection is gone, for whatever reason.
  virtual void on_closed(const std::string& reason) = 0;
};

struct WebSocketRoute {
  std::string path;
  // Returns a response to refuse the upgrade (e.g. 401 with a JSON error), nullopt to accept.
  std::function<std::optional<HttpResponse>(const HttpRequest&)> authorize;
  std::function<std::shared_ptr<WebSocketSession>(const HttpRequest&, std::shared_ptr<WebSocketPeer>)> open;
};

}  // namespace trainyard::net
