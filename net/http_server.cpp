#include "net/http_server.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "proto/text.h"
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <deque>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <unordered_map>

namespace trainyard::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
using BeastRequest = http::request<http::string_body>;

// The remote address without its port: what the per-address cap counts.
std::string address_text(const tcp::socket& socket) {
  beast::error_code ec;
  const auto ep = socket.remote_endpoint(ec);
  return ec ? std::string("?") : ep.address().to_string();
}

std::string endpoint_text(const tcp::socket& socket) {
  beast::error_code ec;
  const auto ep = socket.remote_endpoint(ec);
  return ec ? std::string("?") : ep.address().to_string() + ":" + std::to_string(ep.port());
}

// Moves the body out of `req`: the handler owns it from here.
HttpRequest to_request(BeastRequest& req, const std::string& remote) {
  HttpRequest r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  r.body = std::move(req.body());
  r.remote = remote;
  for (const auto& field : req) {
    std::string name(field.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r.headers[name] = std::string(field.value());
  }
  return r;
}

// The response as it goes on the wire, in one buffer written once: Beast's serializer and its
// buffer sequences were a visible share of the I/O thread's time per submission (perf, under
// bench/submit). Handlers never answer 1xx, 204 or 304, so every response carries a body length.
std::string wire_format(const HttpResponse& resp, unsigned version, bool keep_alive) {
  std::string out;
  out.reserve(resp.body.size() + 192);
  out += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  out += std::to_string(resp.status);
  out += ' ';
  out += http::obsolete_reason(static_cast<http::status>(resp.status));
  out += "\r\nServer: trainyard\r\nContent-Type: ";
  out += resp.content_type;
  for (const auto& [name, value] : resp.headers) {
    out += "\r\n";
    out += name;
    out += ": ";
    out += value;
  }
  // HTTP/1.1 keeps connections alive unless told otherwise, HTTP/1.0 closes them unless told.
  if (version == 10 && keep_alive) out += "\r\nConnection: keep-alive";
  if (version != 10 && !keep_alive) out += "\r\nConnection: close";
  out += "\r\nContent-Length: ";
  out += std::to_string(resp.body.size());
  out += "\r\n\r\n";
  out += resp.body;
  return out;
}

}  // namespace

HttpResponse error_response(int status, const std::string& code, const std::string& message, const std::string& field) {
  nlohmann::json err = {{"code", code}, {"message", message}};
  if (!field.empty()) err["field"] = field;
  return HttpResponse{status, "application/json", json_text(nlohmann::json{{"error", err}}), {}};
}

// Open connections register a closer so that stop() can end them.
struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  Impl(asio::io_context& io_, HttpServerOptions options_, HttpHandler handler_, std::vector<WebSocketRoute> routes_)
      : io(io_),
        options(options_),
        handler(std::move(handler_)),
        routes(std::move(routes_)),
        accept_pause(io_),
        backoff(options_.accept_backoff_first, options_.accept_backoff_ceiling),
        limits(options_.caps),
        accept_failures_log(options_.log_interval),
        refusals_log(options_.log_interval),
        timeouts_log(options_.log_interval) {}

  asio::io_context& io;
  HttpServerOptions options;
  HttpHandler handler;
  std::vector<WebSocketRoute> routes;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unordered_map<std::uint64_t, std::function<void()>> closers;
  std::uint64_t next_connection = 1;
  bool stopped = false;
  asio::steady_timer accept_pause;
  AcceptBackoff backoff;
  ConnectionLimits limits;
  std::uint64_t refused_connections = 0;
  RateLimitedLog accept_failures_log;
  RateLimitedLog refusals_log;
  RateLimitedLog timeouts_log;

  class WsConnection;

  asio::awaitable<void> accept_loop() {
    auto self = shared_from_this();
    while (!stopped) {
      auto [ec, socket] = co_await acceptor->async_accept(use_tuple);
      if (ec) {
        if (stopped || ec == asio::error::operation_aborted) co_return;
        co_await pause_after_failed_accept(ec);
        continue;
      }
      backoff.after_success();
      const std::string address = address_text(socket);
      if (const Admission admission = limits.admit(address); admission != Admission::admitted) {
        refuse(socket, address, admission);
        continue;
      }
      // Answers are written whole; Nagle would only hold them back waiting for the client's ACK.
      beast::error_code nodelay_error;
      socket.set_option(tcp::no_delay(true), nodelay_error);
      asio::co_spawn(io, serve(std::move(socket), address), asio::detached);
    }
  }

  // Out of descriptors, the pending connection stays queued and the next accept fails at once:
  // retried without a pause, the loop spun at a full core and logged every failure.
  asio::awaitable<void> pause_after_failed_accept(const beast::error_code& ec) {
    const auto wait = backoff.after_failure();
    if (const auto suppressed = accept_failures_log.occurred(std::chrono::steady_clock::now())) {
      spdlog::warn("event=accept_failed error=\"{}\" retry_in_ms={} open_connections={} suppressed={}", ec.message(),
                   wait.count(), limits.open(), *suppressed);
    }
    accept_pause.expires_after(wait);
    co_await accept_pause.async_wait(use_tuple);
  }

  void refuse(tcp::socket& socket, const std::string& address, Admission admission) {
    ++refused_connections;
    if (const auto suppressed = refusals_log.occurred(std::chrono::steady_clock::now())) {
      spdlog::warn("event=connection_refused remote={} why={} open_connections={} open_from_remote={} refused_total={} "
                   "suppressed={}",
                   address, to_string(admission), limits.open(), limits.open_from(address), refused_connections,
                   *suppressed);
    }
    beast::error_code ec;
    socket.close(ec);
  }

  // Calls the handler and suspends until it responds (possibly after a store commit).
  asio::awaitable<HttpResponse> call_handler(HttpRequest request) {
    return asio::async_initiate<decltype(asio::use_awaitable), void(HttpResponse)>(
        [this](auto completion, HttpRequest req) {
          auto shared = std::make_shared<decltype(completion)>(std::move(completion));
          auto answered = std::make_shared<bool>(false);
          auto respond = [this, shared, answered](HttpResponse resp) {
            if (std::exchange(*answered, true)) return;
            asio::post(io, [shared, resp = std::move(resp)]() mutable { (*shared)(std::move(resp)); });
          };
          try {
            handler(std::move(req), respond);
          } catch (const std::exception& e) {
            spdlog::error("event=handler_failed error=\"{}\"", e.what());
            respond(error_response(500, "internal", "internal error"));
          }
        },
        asio::use_awaitable, std::move(request));
  }

  asio::awaitable<void> write(beast::tcp_stream& stream, const HttpResponse& resp, unsigned version, bool keep_alive) {
    const std::string wire = wire_format(resp, version, keep_alive);
    stream.expires_after(options.idle_timeout);
    co_await asio::async_write(stream, asio::buffer(wire), use_tuple);
  }

  // After refusing a request we cannot parse, read and discard what the client is still sending
  // (bounded), so it sees our 4xx instead of a connection reset.
  asio::awaitable<void> drain_and_close(beast::tcp_stream& stream) {
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream.expires_after(std::chrono::seconds(5));
    std::vector<char> sink(64 * 1024);
    std::size_t total = 0;
    while (total < (64u << 20)) {
      auto [rec, n] = co_await stream.async_read_some(asio::buffer(sink), use_tuple);
      if (rec) break;
      total += n;
    }
    stream.socket().close(ec);
  }

  // Answers a request that could not be read whole when the client can still hear it: 431 or 413
  // over a size limit, 400 when malformed. Past a deadline the stream has closed the socket.
  asio::awaitable<void> refuse_unread(beast::tcp_stream& stream, const beast::error_code& ec, const char* part,
                                      const std::string& remote) {
    if (ec == beast::error::timeout) {
      if (const auto suppressed = timeouts_log.occurred(std::chrono::steady_clock::now())) {
        spdlog::warn("event=request_timeout remote={} part={} suppressed={}", remote, part, *suppressed);
      }
    } else if (ec == http::error::header_limit) {
      co_await write(stream, error_response(431, "header_too_large", "request header exceeds the limit of " +
                                                                      std::to_string(options.header_limit) + " bytes"),
                     11, false);
      co_await drain_and_close(stream);
    } else if (ec == http::error::body_limit) {
      co_await write(stream, error_response(413, "body_too_large", "request body exceeds the limit of " +
                                                                    std::to_string(options.body_limit) + " bytes"),
                     11, false);
      co_await drain_and_close(stream);
    } else if (ec != http::error::end_of_stream && ec != asio::error::eof && ec != asio::error::operation_aborted &&
               ec != asio::error::connection_reset) {
      co_await write(stream, error_response(400, "bad_request", "malformed HTTP request: " + ec.message()), 11, false);
      co_await drain_and_close(stream);
    }
  }

  // `address` was admitted by `limits`; the connection counts against it until this returns
  // (after the WebSocket session, for an upgrade).
  asio::awaitable<void> serve(tcp::socket socket, std::string address) {
    auto self = shared_from_this();
    const std::string remote = endpoint_text(socket);
    beast::tcp_stream stream(std::move(socket));
    const std::uint64_t id = next_connection++;
    closers[id] = [&stream] {
      beast::error_code ec;
      stream.socket().close(ec);
    };
    struct Unregister {
      Impl* impl;
      std::uint64_t id;
      std::string address;
      ~Unregister() {
        impl->closers.erase(id);
        impl->limits.release(address);
      }
    } unregister{this, id, std::move(address)};

    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(options.body_limit);
      parser.header_limit(static_cast<std::uint32_t>(options.header_limit));
      // A kept-alive connection may stay silent for the idle timeout; a request, once begun, has
      // the header timeout for its header and then the body timeout for its body.
      if (buffer.size() == 0) {
        stream.expires_after(options.idle_timeout);
        auto [ec, n] = co_await stream.async_read_some(buffer.prepare(4096), use_tuple);
        if (ec) co_return;
        buffer.commit(n);
      }
      stream.expires_after(options.header_timeout);
      if (auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, use_tuple); ec) {
        co_await refuse_unread(stream, ec, "header", remote);
        co_return;
      }
      if (!parser.is_done()) {
        stream.expires_after(options.body_timeout);
        if (auto [ec, n] = co_await http::async_read(stream, buffer, parser, use_tuple); ec) {
          co_await refuse_unread(stream, ec, "body", remote);
          co_return;
        }
      }
      BeastRequest req = parser.release();
      HttpRequest request = to_request(req, remote);
      if (const std::string problem = parse_target(request); !problem.empty()) {
        co_await write(stream, error_response(400, "bad_request", "malformed request target: " + problem, "path"),
                       req.version(), false);
        co_return;
      }
      if (websocket::is_upgrade(req)) {
        closers.erase(id);
        co_await upgrade(std::move(stream), std::move(req), std::move(request));
        co_return;
      }
      const bool keep_alive = req.keep_alive();
      HttpResponse resp = co_await call_handler(std::move(request));
      co_await write(stream, resp, req.version(), keep_alive);
      if (!keep_alive) break;
    }
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  asio::awaitable<void> upgrade(beast::tcp_stream stream, BeastRequest req, HttpRequest request);
};

class HttpServer::Impl::WsConnection : public WebSocketPeer, public std::enable_shared_from_this<WsConnection> {
 public:
  WsConnection(Impl& server, beast::tcp_stream stream) : server_(server), ws_(std::move(stream)) {}

  void send(std::string text) override {
    if (closed_ || closing_) return;
    outbox_.push_back(std::move(text));
    start_writer();
  }

  void close(std::string reason) override {
    if (closed_ || closing_) return;
    closing_ = true;
    close_reason_ = reason.substr(0, 120);
    start_writer();
  }

  asio::awaitable<void> run(BeastRequest req, const WebSocketRoute& route, HttpRequest request) {
    auto self = shared_from_this();
    const std::uint64_t id = server_.next_connection++;
    server_.closers[id] = [this] {
      beast::error_code ec;
      beast::get_lowest_layer(ws_).socket().close(ec);
    };
    beast::get_lowest_layer(ws_).expires_never();
    websocket::stream_base::timeout timeouts{};
    timeouts.handshake_timeout = std::chrono::seconds(30);
    timeouts.idle_timeout = server_.options.idle_timeout;
    timeouts.keep_alive_pings = true;
    ws_.set_option(timeouts);
    ws_.read_message_max(server_.options.websocket_message_limit);
    auto [ec] = co_await ws_.async_accept(req, use_tuple);
    if (ec) {
      server_.closers.erase(id);
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
    server_.closers.erase(id);
    auto session = std::move(session_);
    session->on_closed(reason);
  }

 private:
  void start_writer() {
    if (writing_) return;
    writing_ = true;
    asio::co_spawn(ws_.get_executor(), write_loop(shared_from_this()), asio::detached);
  }

  asio::awaitable<void> write_loop([[maybe_unused]] std::shared_ptr<WsConnection> self) {
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
      co_await ws_.async_close(websocket::close_reason(websocket::close_code::normal, close_reason_), use_tuple);
    }
  }

  Impl& server_;
  websocket::stream<beast::tcp_stream> ws_;
  std::shared_ptr<WebSocketSession> session_;
  std::deque<std::string> outbox_;
  bool writing_ = false;
  bool closing_ = false;
  bool closed_ = false;
  std::string close_reason_;
};

asio::awaitable<void> HttpServer::Impl::upgrade(beast::tcp_stream stream, BeastRequest req, HttpRequest request) {
  auto self = shared_from_this();
  const WebSocketRoute* route = nullptr;
  for (const auto& r : routes) {
    if (r.path == request.path) route = &r;
  }
  if (!route) {
    co_await write(stream, error_response(404, "not_found", "no WebSocket endpoint at " + request.path), req.version(), false);
    co_return;
  }
  if (auto refusal = route->authorize(request)) {
    co_await write(stream, *refusal, req.version(), false);
    co_return;
  }
  auto connection = std::make_shared<WsConnection>(*this, std::move(stream));
  co_await connection->run(std::move(req), *route, std::move(request));
}

HttpServer::HttpServer(asio::io_context& io, HttpServerOptions options, HttpHandler handler,
                       std::vector<WebSocketRoute> websocket_routes)
    : impl_(std::make_shared<Impl>(io, options, std::move(handler), std::move(websocket_routes))) {}

HttpServer::~HttpServer() { stop(); }

unsigned short HttpServer::listen(const std::string& host, unsigned short port) {
  const tcp::endpoint endpoint(asio::ip::make_address(host), port);
  impl_->acceptor = std::make_unique<tcp::acceptor>(impl_->io);
  impl_->acceptor->open(endpoint.protocol());
  impl_->acceptor->set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor->bind(endpoint);
  impl_->acceptor->listen(asio::socket_base::max_listen_connections);
  asio::co_spawn(impl_->io, impl_->accept_loop(), asio::detached);
  return impl_->acceptor->local_endpoint().port();
}

void HttpServer::stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  beast::error_code ec;
  if (impl_->acceptor) impl_->acceptor->close(ec);
  impl_->accept_pause.cancel();
  auto closers = impl_->closers;
  for (auto& [id, close] : closers) close();
}

}  // namespace trainyard::net
