#include "net/ws_client.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <deque>
#include <optional>
#include <type_traits>

#include "net/awaitable.h"
#include "net/server_list.h"
#include "net/url.h"
#include "proto/errors.h"

namespace trainyard::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// With the close code: 1001 (going away) is a daemon shutting down, to be redialled as usual.
std::string closed_by_server(const websocket::close_reason& close) {
  std::string text = "closed by server with code " + std::to_string(close.code);
  if (close.code == websocket::close_code::going_away) text += " (going away)";
  return text + ": " + std::string(close.reason.data(), close.reason.size());
}

template <class Stream>
websocket::stream<Stream> open_stream(asio::io_context& io, const TlsContext& tls) {
  if constexpr (std::is_same_v<Stream, TlsStream>) {
    return websocket::stream<Stream>(io, *tls);
  } else {
    return websocket::stream<Stream>(io);
  }
}

// Over plain TCP (`beast::tcp_stream`) or TLS (`TlsStream`).
template <class Stream>
class ClientConnection : public WebSocketClient, public std::enable_shared_from_this<ClientConnection<Stream>> {
 public:
  ClientConnection(asio::io_context& io, Url url, std::vector<std::pair<std::string, std::string>> headers,
                   WebSocketClientHandlers handlers, TlsContext tls, std::optional<asio::ip::address> local_address)
      : io_(io),
        url_(std::move(url)),
        local_address_(std::move(local_address)),
        headers_(std::move(headers)),
        handlers_(std::move(handlers)),
        tls_(std::move(tls)),
        ws_(open_stream<Stream>(io, tls_)) {}

  void start() { asio::co_spawn(io_, run(this->shared_from_this()), asio::detached); }

  void send(std::string text) override {
    if (!open_ || closing_) return;
    outbox_.push_back(std::move(text));
    start_writer();
  }

  void close(std::string reason) override {
    if (finished_ || closing_) return;
    closing_ = true;
    close_reason_ = reason.substr(0, 120);
    if (!open_) {
      beast::error_code ec;
      beast::get_lowest_layer(ws_).socket().close(ec);
      return;
    }
    start_writer();
  }

  // Whatever step is in progress (connecting, a handshake, the read) fails on the closed socket and
  // ends in finish, which reports this reason rather than that failure.
  void abort(std::string reason) override {
    if (finished_) return;
    closing_ = true;
    aborted_because_ = std::move(reason);
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
  }

 private:
  asio::awaitable<void> run([[maybe_unused]] std::shared_ptr<ClientConnection> self) {
    tcp::resolver resolver(io_);
    auto [rec, results] = co_await resolver.async_resolve(url_.host, std::to_string(url_.port), use_tuple);
    if (rec) co_return finish("cannot resolve " + url_.host + ": " + rec.message());
    beast::get_lowest_layer(ws_).expires_after(std::chrono::seconds(10));
    const beast::error_code cec = co_await connect_socket(results);
    if (cec) co_return finish("cannot connect to " + url_.host + ":" + std::to_string(url_.port) + ": " + cec.message());
    if (closing_) co_return finish("closed");
    beast::get_lowest_layer(ws_).socket().set_option(tcp::no_delay(true));
    if constexpr (std::is_same_v<Stream, TlsStream>) {
      expect_server_name(ws_.next_layer().native_handle(), url_.host);
      auto [tec] = co_await ws_.next_layer().async_handshake(asio::ssl::stream_base::client, use_tuple);
      if (tec) {
        co_return finish("TLS with " + url_.host + ":" + std::to_string(url_.port) + " failed: " +
                         describe_handshake_failure(SSL_get_verify_result(ws_.next_layer().native_handle()),
                                                    tec.message(), url_.host, "--ca-file"));
      }
    }
    beast::get_lowest_layer(ws_).expires_never();
    websocket::stream_base::timeout timeouts = websocket::stream_base::timeout::suggested(beast::role_type::client);
    ws_.set_option(timeouts);
    ws_.read_message_max(64 << 20);
    ws_.set_option(websocket::stream_base::decorator([headers = headers_](websocket::request_type& req) {
      for (const auto& [name, value] : headers) req.set(name, value);
    }));
    websocket::response_type response;
    auto [hec] = co_await ws_.async_handshake(response, url_.host + ":" + std::to_string(url_.port), url_.path, use_tuple);
    if (hec) {
      // Only a declined upgrade carries the server's status: Beast presets 500 in `response` before
      // anything is read, which a connection closed unanswered (e.g. over a connection cap) showed.
      if (hec != websocket::error::upgrade_declined) {
        co_return finish("the upgrade got no answer: " + hec.message());
      }
      co_return finish(refused_upgrade_reason(static_cast<int>(response.result_int()),
                                              std::string(response[beast::http::field::location]), response.body(),
                                              std::string(response[beast::http::field::retry_after])));
    }
    open_ = true;
    if (handlers_.on_open) handlers_.on_open();
    beast::flat_buffer buffer;
    std::string reason = "closed";
    for (;;) {
      auto [ec, n] = co_await ws_.async_read(buffer, use_tuple);
      if (ec) {
        reason = ec == websocket::error::closed ? closed_by_server(ws_.reason()) : ec.message();
        break;
      }
      std::string text = beast::buffers_to_string(buffer.data());
      buffer.consume(buffer.size());
      if (handlers_.on_message) handlers_.on_message(std::move(text));
    }
    finish(reason);
  }

  // To the first address that answers; from `local_address_`, when set, to the first address only
  // (connecting to a range closes and reopens the socket between tries, which would drop the bind).
  asio::awaitable<beast::error_code> connect_socket(const tcp::resolver::results_type& results) {
    auto& stream = beast::get_lowest_layer(ws_);
    if (!local_address_) {
      auto [ec, ep] = co_await stream.async_connect(results, use_tuple);
      co_return ec;
    }
    const tcp::endpoint server = results.begin()->endpoint();
    beast::error_code ec;
    stream.socket().open(server.protocol(), ec);
    if (!ec) stream.socket().bind(tcp::endpoint(*local_address_, 0), ec);
    if (ec) co_return ec;
    auto [cec] = co_await stream.async_connect(server, use_tuple);
    co_return cec;
  }

  void finish(const std::string& reason) {
    if (std::exchange(finished_, true)) return;
    open_ = false;
    outbox_.clear();
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().close(ec);
    if (handlers_.on_closed) handlers_.on_closed(aborted_because_ ? *aborted_because_ : reason);
  }

  void start_writer() {
    if (writing_) return;
    writing_ = true;
    asio::co_spawn(io_, write_loop(this->shared_from_this()), asio::detached);
  }

  asio::awaitable<void> write_loop([[maybe_unused]] std::shared_ptr<ClientConnection> self) {
    while (!outbox_.empty() && open_) {
      std::string msg = std::move(outbox_.front());
      outbox_.pop_front();
      ws_.text(true);
      auto [ec, n] = co_await ws_.async_write(asio::buffer(msg), use_tuple);
      if (ec) break;
    }
    writing_ = false;
    if (closing_ && open_) {
      co_await ws_.async_close(websocket::close_reason(websocket::close_code::normal, close_reason_), use_tuple);
    }
  }

  asio::io_context& io_;
  Url url_;
  std::optional<asio::ip::address> local_address_;
  std::vector<std::pair<std::string, std::string>> headers_;
  WebSocketClientHandlers handlers_;
  TlsContext tls_;  // kept for the connection's life
  websocket::stream<Stream> ws_;
  std::deque<std::string> outbox_;
  bool open_ = false;
  bool writing_ = false;
  bool closing_ = false;
  bool finished_ = false;
  std::string close_reason_;
  std::optional<std::string> aborted_because_;
};

}  // namespace

std::shared_ptr<WebSocketClient> WebSocketClient::connect(asio::io_context& io, const std::string& url,
                                                          std::vector<std::pair<std::string, std::string>> headers,
                                                          WebSocketClientHandlers handlers, TlsContext tls,
                                                          const std::string& local_address) {
  Url parsed = parse_url(url, "server");
  std::optional<asio::ip::address> bind_to;
  if (!local_address.empty()) {
    beast::error_code ec;
    bind_to = asio::ip::make_address(local_address, ec);
    if (ec) throw InvalidInput("local address", "'" + local_address + "' is not an IP address");
  }
  if (parsed.scheme == "http") {
    auto conn = std::make_shared<ClientConnection<beast::tcp_stream>>(io, std::move(parsed), std::move(headers),
                                                                      std::move(handlers), nullptr, bind_to);
    conn->start();
    return conn;
  }
  if (!tls) tls = make_client_tls_context({});
  auto conn = std::make_shared<ClientConnection<TlsStream>>(io, std::move(parsed), std::move(headers),
                                                            std::move(handlers), std::move(tls), bind_to);
  conn->start();
  return conn;
}

}  // namespace trainyard::net
