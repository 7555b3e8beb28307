#pragma once
// A WebSocket client connection (the agent's link to the daemon). One connection per object;
// reconnecting is the caller's policy. All callbacks run on the io_context's thread.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "net/tls.h"
#include "net/websocket.h"

namespace boost::asio {
class io_context;
}

namespace trainyard::net {

struct WebSocketClientHandlers {
  std::function<void()> on_open;
  std::function<void(std::string)> on_message;
  // Called exactly once: after a failed connect/upgrade (with the server's reason) or a close.
  std::function<void(const std::string& reason)> on_closed;
};

class WebSocketClient : public WebSocketPeer {
 public:
  // Starts connecting to `url` (http://host:port/path is upgraded to WebSocket; https:// to
  // WebSocket over TLS, wss, verifying the server and its name with `tls`, a client context:
  // null takes the system's trust store). `local_address` (an IP; empty: the kernel's choice) is the
  // source address to bind: one process holding more connections to one server port than one
  // address has ephemeral ports (the fleet simulator) spreads them over 127.0.0.2, 127.0.0.3, ...
  // Throws InvalidInput("local address") for one that is not an IP address.
  static std::shared_ptr<WebSocketClient> connect(boost::asio::io_context& io, const std::string& url,
                                                  std::vector<std::pair<std::string, std::string>> headers,
                                                  WebSocketClientHandlers handlers, TlsContext tls = nullptr,
                                                  const std::string& local_address = {});
};

}  // namespace trainyard::net
