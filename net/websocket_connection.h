#pragma once
// One WebSocket connection of the HTTP server (an agent's): the upgrade's handshake, messages read
// into the route's session, and sends queued and written one at a time. Includes Beast: only
// http_server.cpp includes it (one translation unit compiles the server's Beast code).
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <deque>
#include <memory>
#include <string>

#include "net/awaitable.h"
#include "net/http_server.h"
#include "net/open_connections.h"
#include "net/websocket.h"

namespace trainyard::net {

namespace websocket_connection_detail {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;

template <class Stream>
class WebSocketConnection : public WebSocketPeer, public std::enable_shared_from_this<WebSocketConnection<Stream>> {
 public:
  WebSocketConnection(OpenConnections& connections, const HttpServerOptions& options, Stream stream)
      : connections_(connections), options_(options), ws_(std::move(stream)) {}

  void send(std::string text) override {
    if (closed_ || closing_) return;
    outbox_.push_back(std::move(text));
    start_writer();
  }

  void close(std::string reason) override { close_with(websocket::close_code::normal, std::move(reason)); }

  // The read in progress then fails, which ends the connection as any broken one ends.
  void abort(std::string) override {
    if (closed_) return;
    closing_ = true;
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
  }

  void close_with(websocket::close_code code, std::string reason) {
    if (closed_ || closing_) return;
    closing_ = true;
    close_code_ = code;
    close_reason_ = reason.substr(0, 120);
    start_writer();
  }

  // Accepts the upgrade `req` asked for, then reads messages into the route's session until the
  // connection ends; it counts among the open connections meanwhile.
  asio::awaitable<void> run(http::request<http::string_body> req, const WebSocketRoute& route, HttpRequest request) {
    auto self = this->shared_from_this();
    const std::uint64_t id = connections_.next_id++;
    connections_.closers[id] = [this] {
      beast::error_code ec;
      beast::get_lowest_layer(ws_).socket().close(ec);
    };
    connections_.websockets[id] = [this](std::string reason) {
      close_with(websocket::close_code::going_away, std::move(reason));
    };
    struct Unregister {
      OpenConnections& connections;
      std::uint64_t id;
      ~Unregister() { connections.websockets.erase(id); }
    } unregister{connections_, id};
    beast::get_lowest_layer(ws_).expires_never();
    websocket::stream_base::timeout timeouts{};
    timeouts.handshake_timeout = std::chrono::seconds(30);
    timeouts.idle_timeout = options_.idle_timeout;
    timeouts.keep_alive_pings = true;
    ws_.set_option(timeouts);
    ws_.read_message_max(options_.websocket_message_limit);
    auto [ec] = co_await ws_.async_accept(req, use_tuple);
    if (ec) {
      connections_.closers.erase(id);
      co_return;
    }
    session_ = route.open(request, self);
    beast::flat_buffer buffer;
    std::string reason;
    for (;;) {
      auto [rec, n] = co_await ws_.async_read(buffer, use_tuple);
      if (rec) {
        reason = rec == websocket::error::closed ? "closed by peer" : rec.message();
        break;
      }
      std::string text = beast::buffers_to_string(buffer.data());
      buffer.consume(buffer.size());
      session_->on_message(std::move(text));
    }
    closed_ = true;
    connections_.closers.erase(id);
    auto session = std::move(session_);
    session->on_closed(reason);
  }

 private:
  void start_writer() {
    if (writing_) return;
    writing_ = true;
    asio::co_spawn(ws_.get_executor(), write_loop(this->shared_from_this()), asio::detached);
  }

  asio::awaitable<void> write_loop([[maybe_unused]] std::shared_ptr<WebSocketConnection> self) {
    while (!outbox_.empty() && !closed_) {
      std::string msg = std::move(outbox_.front());
      outbox_.pop_front();
      ws_.text(true);
      auto [ec, n] = co_await ws_.async_write(asio::buffer(msg), use_tuple);
      if (ec) {
        outbox_.clear();
        break;
      }
    }
    writing_ = false;
    if (closing_ && !closed_) {
      co_await ws_.async_close(websocket::close_reason(close_code_, close_reason_), use_tuple);
    }
  }

  OpenConnections& connections_;
  const HttpServerOptions& options_;
  websocket::stream<Stream> ws_;
  std::shared_ptr<WebSocketSession> session_;
  std::deque<std::string> outbox_;
  bool writing_ = false;
  bool closing_ = false;
  bool closed_ = false;
  websocket::close_code close_code_ = websocket::close_code::normal;
  std::string close_reason_;
};

}  // namespace websocket_connection_detail

using websocket_connection_detail::WebSocketConnection;

}  // namespace trainyard::net
