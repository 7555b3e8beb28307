#include "net/http_server.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "proto/text.h"
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <array>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <spdlog/spdlog.h>
#include <unordered_map>

#include "net/awaitable.h"
#include "net/http_server_testing.h"
#include "net/http_wire.h"
#include "net/open_connections.h"
#include "net/tls.h"
#include "net/websocket_connection.h"
#include "proto/backoff.h"
#include "proto/errors.h"

namespace trainyard::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using BeastRequest = http::request<http::string_body>;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// What the client presented; the gateway, not the handshake, decides whether that will do, so
// that API clients need no certificate and a refused agent is told why in words.
std::optional<PeerCertificate> peer_certificate_of(SSL* ssl) {
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (!cert) return std::nullopt;
  PeerCertificate peer;
  const long result = SSL_get_verify_result(ssl);
  peer.verified = result == X509_V_OK;
  if (!peer.verified) peer.verify_error = X509_verify_cert_error_string(result);
  std::array<char, 256> cn{};
  const int length = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn.data(), cn.size());
  if (length > 0) peer.common_name.assign(cn.data(), static_cast<std::size_t>(length));
  auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    if (name->type != GEN_DNS) continue;
    peer.dns_names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(name->d.dNSName)),
                                static_cast<std::size_t>(ASN1_STRING_length(name->d.dNSName)));
  }
  GENERAL_NAMES_free(names);
  X509_free(cert);
  return peer;
}

bool is_plain_http_on_tls_port(const beast::error_code& ec) {
  return ec.category() == asio::error::get_ssl_category() && ERR_GET_REASON(ec.value()) == SSL_R_HTTP_REQUEST;
}

template <class Stream>
void close_socket(Stream& stream) {
  beast::error_code ec;
  beast::get_lowest_layer(stream).socket().close(ec);
}

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

HeaderFields header_fields(const BeastRequest& req) {
  HeaderFields fields;
  for (const auto& field : req) fields.emplace_back(field.name_string(), field.value());
  return fields;
}

// What a connection refused for a cap is told, when it can be told (over plain HTTP).
HttpResponse refusal_response(Admission admission) {
  HttpResponse resp = admission == Admission::over_total
                          ? error_response(503, "server_busy",
                                           "the daemon holds as many connections as --max-connections allows")
                          : error_response(429, "too_many_connections",
                                           admission == Admission::over_per_caller
                                               ? "this caller holds as many connections as --max-connections-per-user allows"
                                               : "this address holds as many unauthenticated connections being answered "
                                                 "as --max-connections-per-ip allows");
  resp.headers.emplace_back("Retry-After", "1");
  return resp;
}

// Refusals answered at once, each holding its descriptor for a moment; past this many at a time a
// refused connection is closed without a word, so a flood of them costs no more descriptors.
constexpr std::size_t kMaxRefusalsAnswering = 64;

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

}  // namespace

// Open connections register a closer so that stop() can end them.
struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  Impl(asio::io_context& io_, HttpServerOptions options_, HttpHandler handler_, std::vector<WebSocketRoute> routes_)
      : io(io_),
        options(options_),
        handler(std::move(handler_)),
        routes(std::move(routes_)),
        accept_pause(io_),
        backoff({options_.accept_backoff_first, options_.accept_backoff_ceiling}),
        limits(options_.caps),
        accept_failures_log(options_.log_interval),
        refusals_log(options_.log_interval),
        evictions_log(options_.log_interval),
        timeouts_log(options_.log_interval),
        handshake_failures_log(options_.log_interval) {
    if (options.tls.enabled()) tls = make_server_tls_context(options.tls);
  }

  asio::io_context& io;
  HttpServerOptions options;
  HttpHandler handler;
  CallerOf caller_of;
  std::vector<WebSocketRoute> routes;
  std::unique_ptr<tcp::acceptor> acceptor;
  OpenConnections connections;
  bool stopped = false;
  bool draining = false;
  asio::steady_timer accept_pause;
  Backoff backoff;
  ConnectionLimits limits;
  std::uint64_t refused_connections = 0;
  std::uint64_t evicted_connections = 0;
  std::size_t refusals_answering = 0;
  RateLimitedLog accept_failures_log;
  RateLimitedLog refusals_log;
  RateLimitedLog evictions_log;
  RateLimitedLog timeouts_log;
  RateLimitedLog handshake_failures_log;
  TlsContext tls;  // null: plain HTTP

  asio::awaitable<void> accept_loop() {
    auto self = shared_from_this();
    while (!stopped && !draining) {
      auto [ec, socket] = co_await acceptor->async_accept(use_tuple);
      if (ec) {
        if (stopped || draining || ec == asio::error::operation_aborted) co_return;
        co_await pause_after_failed_accept(ec);
        continue;
      }
      backoff.after_success();
      const std::string address = address_text(socket);
      const std::uint64_t id = connections.next_id++;
      const ConnectionLimits::Verdict verdict = limits.admit(id, address);
      if (verdict.admission != Admission::admitted) {
        refuse(std::move(socket), address, verdict.admission);
        continue;
      }
      if (verdict.evict) evict(*verdict.evict, address);
      // Answers are written whole; Nagle would only hold them back waiting for the client's ACK.
      beast::error_code nodelay_error;
      socket.set_option(tcp::no_delay(true), nodelay_error);
      const SteadyTime first_header_by = std::chrono::steady_clock::now() + options.header_timeout;
      asio::co_spawn(io, serve(std::move(socket), id, first_header_by), asio::detached);
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

  void refuse(tcp::socket socket, const std::string& address, Admission admission) {
    ++refused_connections;
    if (const auto suppressed = refusals_log.occurred(std::chrono::steady_clock::now())) {
      spdlog::warn("event=connection_refused remote={} why={} open_connections={} open_from_remote={} refused_total={} "
                   "suppressed={}",
                   address, to_string(admission), limits.open(), limits.open_from(address), refused_connections,
                   *suppressed);
    }
    if (tls || refusals_answering >= kMaxRefusalsAnswering) {
      beast::error_code ec;
      socket.close(ec);
      return;
    }
    asio::co_spawn(io, answer_refusal(beast::tcp_stream(std::move(socket)), admission), asio::detached);
  }

  // A refused client hears why and when to come back, rather than "connection closed".
  asio::awaitable<void> answer_refusal(beast::tcp_stream stream, Admission admission) {
    auto self = shared_from_this();
    ++refusals_answering;
    struct Answered {
      std::size_t& answering;
      ~Answered() { --answering; }
    } answered{refusals_answering};
    const std::string wire = wire_format(refusal_response(admission), 11, false);
    stream.expires_after(std::chrono::seconds(1));
    if (auto [ec, n] = co_await asio::async_write(stream, asio::buffer(wire), use_tuple); !ec) {
      co_await drain_and_close(stream, std::chrono::seconds(1));
    }
  }

  // Closes connection `id` to make room for one from `address` (ConnectionLimits); one evicted
  // before its coroutine began is closed there (serve).
  void evict(std::uint64_t id, const std::string& address) {
    ++evicted_connections;
    if (const auto suppressed = evictions_log.occurred(std::chrono::steady_clock::now())) {
      spdlog::warn("event=connection_evicted for_remote={} why=oldest_unauthenticated_waiting open_connections={} "
                   "open_from_remote={} evicted_total={} suppressed={}",
                   address, limits.open(), limits.open_from(address), evicted_connections, *suppressed);
    }
    if (const auto closer = connections.closers.find(id); closer != connections.closers.end()) {
      const auto close = closer->second;  // the close may erase its entry
      close();
    }
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

  // Returns whether the whole response was written.
  template <class Stream>
  asio::awaitable<bool> write(Stream& stream, const HttpResponse& resp, unsigned version, bool keep_alive) {
    const std::string wire = wire_format(resp, version, keep_alive);
    beast::get_lowest_layer(stream).expires_after(options.idle_timeout);
    auto [ec, n] = co_await asio::async_write(stream, asio::buffer(wire), use_tuple);
    co_return !ec;
  }

  // Writes the stream's text as it is pushed, until it is closed or a write fails; then closes it,
  // so the handler's side sees the client gone. The peer's reads are not watched: a client that
  // left is found by the next write (an SSE keep-alive at the latest).
  template <class Stream>
  asio::awaitable<void> write_stream(Stream& stream, std::uint64_t id, ResponseStream& body) {
    asio::steady_timer ready(io);
    body.on_ready([&ready] { ready.cancel(); });
    connections.streams[id] = [&body] { body.close(); };
    if (draining) body.close();  // began as the shutdown did: stop_accepting() did not see it
    std::vector<asio::const_buffer> buffers;
    for (;;) {
      const std::vector<ResponseStream::Chunk> chunks = body.take();
      if (!chunks.empty()) {
        buffers.clear();
        for (const ResponseStream::Chunk& chunk : chunks) buffers.push_back(asio::buffer(*chunk));
        beast::get_lowest_layer(stream).expires_after(options.idle_timeout);
        if (auto [ec, n] = co_await asio::async_write(stream, buffers, use_tuple); ec) break;
        continue;
      }
      if (body.closed()) break;
      ready.expires_at(asio::steady_timer::time_point::max());
      co_await ready.async_wait(use_tuple);
    }
    connections.streams.erase(id);
    body.on_ready(nullptr);
    body.close();
  }

  // After refusing a request we cannot parse, read and discard what the client is still sending
  // (bounded), so it sees our 4xx instead of a connection reset.
  template <class Stream>
  asio::awaitable<void> drain_and_close(Stream& stream, std::chrono::seconds within = std::chrono::seconds(5)) {
    beast::error_code ec;
    beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_send, ec);
    beast::get_lowest_layer(stream).expires_after(within);
    std::vector<char> sink(64 * 1024);
    std::size_t total = 0;
    while (total < (64u << 20)) {
      auto [rec, n] = co_await stream.async_read_some(asio::buffer(sink), use_tuple);
      if (rec) break;
      total += n;
    }
    close_socket(stream);
  }

  // Answers a request that could not be read whole when the client can still hear it: 431 or 413
  // over a size limit, 400 when malformed. Past a deadline the stream has closed the socket.
  template <class Stream>
  asio::awaitable<void> refuse_unread(Stream& stream, const beast::error_code& ec, const char* part,
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
               ec != asio::error::connection_reset && ec != asio::ssl::error::stream_truncated) {
      co_await write(stream, error_response(400, "bad_request", "malformed HTTP request: " + ec.message()), 11, false);
      co_await drain_and_close(stream);
    }
  }

  // Connection `id` was admitted by `limits` and counts there until this returns (after the
  // WebSocket session, for an upgrade), unless it is evicted first.
  asio::awaitable<void> serve(tcp::socket socket, std::uint64_t id, SteadyTime first_header_by) {
    auto self = shared_from_this();
    const std::string remote = endpoint_text(socket);
    struct Unregister {
      Impl* impl;
      std::uint64_t id;
      ~Unregister() {
        impl->connections.closers.erase(id);
        impl->limits.release(id);
      }
    } unregister{this, id};
    if (!limits.counts(id)) co_return;  // evicted before it began
    if (!tls) {
      beast::tcp_stream stream(std::move(socket));
      connections.closers[id] = [&stream] { close_socket(stream); };
      co_await serve_requests(stream, id, remote, std::nullopt, first_header_by);
      co_return;
    }
    // Held for the connection's life: a reload (SIGHUP) swaps `tls` for new connections only.
    const TlsContext context = tls;
    TlsStream stream(beast::tcp_stream(std::move(socket)), *context);
    connections.closers[id] = [&stream] { close_socket(stream); };
    if (co_await handshake(stream, remote, first_header_by)) {
      co_await serve_requests(stream, id, remote, peer_certificate_of(stream.native_handle()), first_header_by);
    }
  }

  // The TLS handshake, by the first header's deadline (a client that trickles it is a slow loris
  // too). A plain HTTP request on the TLS port is answered in plain HTTP, saying which scheme to use.
  asio::awaitable<bool> handshake(TlsStream& stream, const std::string& remote, SteadyTime first_header_by) {
    beast::get_lowest_layer(stream).expires_at(first_header_by);
    auto [ec] = co_await stream.async_handshake(asio::ssl::stream_base::server, use_tuple);
    if (!ec) co_return true;
    const bool plain_http = is_plain_http_on_tls_port(ec);
    if (const auto suppressed = handshake_failures_log.occurred(std::chrono::steady_clock::now())) {
      spdlog::warn("event=tls_handshake_failed remote={} error=\"{}\" suppressed={}", remote,
                   plain_http ? "plain HTTP request on the TLS port" : ec.message(), *suppressed);
    }
    if (plain_http) {
      auto& plain = beast::get_lowest_layer(stream);
      co_await write(plain, error_response(400, "tls_required", "this port speaks HTTPS only: use https://"), 11, false);
      co_await drain_and_close(plain);
    }
    co_return false;
  }

  // Sets how long the next wait may take: the first request's header must be in by
  // `first_header_by` (counted from the accept), later ones as `later` says.
  template <class Stream>
  void expire(Stream& stream, bool first, SteadyTime first_header_by, std::chrono::milliseconds later) {
    if (first) {
      beast::get_lowest_layer(stream).expires_at(first_header_by);
    } else {
      beast::get_lowest_layer(stream).expires_after(later);
    }
  }

  // What comes of a request header that must not be acted on (check_request_fields, or its caller
  // over a cap): answered, and the connection closed, so nothing behind it is read as a request.
  template <class Stream>
  asio::awaitable<bool> admit_header(Stream& stream, std::uint64_t id, const std::string& remote, const BeastRequest& req) {
    if (const Result<void> fields = check_request_fields(header_fields(req)); !fields) {
      co_await write(stream, error_response(400, "bad_request", fields.error().message, fields.error().field),
                     req.version(), false);
      co_await drain_and_close(stream);
      co_return false;
    }
    std::optional<Caller> caller;
    if (caller_of) caller = caller_of(req[http::field::authorization]);
    const ConnectionLimits::Verdict verdict = limits.identify(id, caller);
    if (verdict.admission != Admission::admitted) {
      co_await write(stream, refusal_response(verdict.admission), req.version(), false);
      co_await drain_and_close(stream);
      co_return false;
    }
    if (verdict.evict) evict(*verdict.evict, remote);
    co_return true;
  }

  template <class Stream>
  asio::awaitable<void> serve_requests(Stream& stream, std::uint64_t id, std::string remote,
                                       std::optional<PeerCertificate> peer, SteadyTime first_header_by) {
    beast::flat_buffer buffer;
    std::shared_ptr<ResponseStream> body_stream;
    for (bool first = true;; first = false) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(options.body_limit);
      parser.header_limit(static_cast<std::uint32_t>(options.header_limit));
      // A kept-alive connection may stay silent for the idle timeout; a request, once begun, has
      // the header timeout for its header and then the body timeout for its body. A new
      // connection's first header is due the header timeout after the accept: a connection that
      // says nothing is not kept for the idle timeout.
      limits.waiting(id, true);
      if (buffer.size() == 0) {
        if (draining) break;
        expire(stream, first, first_header_by, options.idle_timeout);
        connections.idle[id] = [&stream] { close_socket(stream); };
        auto [ec, n] = co_await stream.async_read_some(buffer.prepare(4096), use_tuple);
        connections.idle.erase(id);
        if (ec) {
          if (ec == beast::error::timeout && first) co_await refuse_unread(stream, ec, "first request", remote);
          co_return;
        }
        buffer.commit(n);
      }
      expire(stream, first, first_header_by, options.header_timeout);
      if (auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, use_tuple); ec) {
        co_await refuse_unread(stream, ec, "header", remote);
        co_return;
      }
      limits.waiting(id, false);
      if (!co_await admit_header(stream, id, remote, parser.get())) co_return;
      if (!parser.is_done()) {
        beast::get_lowest_layer(stream).expires_after(options.body_timeout);
        if (auto [ec, n] = co_await http::async_read(stream, buffer, parser, use_tuple); ec) {
          co_await refuse_unread(stream, ec, "body", remote);
          co_return;
        }
      }
      BeastRequest req = parser.release();
      HttpRequest request = to_request(req, remote);
      request.peer_certificate = peer;
      if (const Result<void> target = parse_target(request); !target) {
        co_await write(stream,
                       error_response(400, "bad_request", "malformed request target: " + target.error().message,
                                      target.error().field),
                       req.version(), false);
        co_return;
      }
      if (websocket::is_upgrade(req)) {
        connections.closers.erase(id);
        co_await upgrade(std::move(stream), std::move(req), std::move(request));
        co_return;
      }
      ++connections.in_flight;
      struct Answered {
        std::size_t& in_flight;
        ~Answered() { --in_flight; }
      } answered{connections.in_flight};
      HttpResponse resp = co_await call_handler(std::move(request));
      // Decided after the handler: a shutdown that began meanwhile closes the connection; a
      // streamed body ends with the connection.
      const bool keep_alive = req.keep_alive() && !draining && !resp.stream;
      // A connection that failed a write is broken: requests pipelined behind are not acted on.
      const bool written = co_await write(stream, resp, req.version(), keep_alive);
      if (resp.stream && !written) resp.stream->close();  // the handler's side forgets it
      if (resp.stream && written) body_stream = std::move(resp.stream);
      if (!written || !keep_alive) break;
    }
    // Not a request in flight: a graceful shutdown does not wait for it, it ends it.
    if (body_stream) co_await write_stream(stream, id, *body_stream);
    beast::error_code ec;
    beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_send, ec);
  }

  template <class Stream>
  asio::awaitable<void> upgrade(Stream stream, BeastRequest req, HttpRequest request);

  asio::awaitable<void> serve_in_memory(InMemoryStream stream) {
    auto self = shared_from_this();
    const std::uint64_t id = connections.next_id++;
    connections.closers[id] = [&stream] { close_socket(stream); };
    co_await serve_requests(stream, id, "in-memory", std::nullopt, std::chrono::steady_clock::now() + options.header_timeout);
    connections.closers.erase(id);
  }
};

template <class Stream>
asio::awaitable<void> HttpServer::Impl::upgrade(Stream stream, BeastRequest req, HttpRequest request) {
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
  auto connection = std::make_shared<WebSocketConnection<Stream>>(connections, options, std::move(stream));
  co_await connection->run(std::move(req), *route, std::move(request));
}

void HttpServerTesting::serve(HttpServer& server, InMemoryStream stream) {
  asio::co_spawn(server.impl_->io, server.impl_->serve_in_memory(std::move(stream)), asio::detached);
}

HttpServer::HttpServer(asio::io_context& io, HttpServerOptions options, HttpHandler handler,
                       std::vector<WebSocketRoute> websocket_routes)
    : impl_(std::make_shared<Impl>(io, options, std::move(handler), std::move(websocket_routes))) {}

HttpServer::~HttpServer() { stop(); }

void HttpServer::identify_callers(CallerOf caller_of) { impl_->caller_of = std::move(caller_of); }

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

Result<void> HttpServer::reload_tls() {
  if (!impl_->tls) return Error::conflict("the server does not speak TLS");
  try {
    impl_->tls = make_server_tls_context(impl_->options.tls);
  } catch (const InvalidInput& e) {
    return Error::invalid_input(e.field(), e.message());
  }
  return {};
}

std::size_t HttpServer::stop_accepting() {
  impl_->draining = true;
  beast::error_code ec;
  if (impl_->acceptor) impl_->acceptor->close(ec);
  impl_->accept_pause.cancel();
  const std::size_t closed = impl_->connections.close_idle();
  impl_->connections.end_streams();
  return closed;
}

std::size_t HttpServer::tell_websockets_going_away(const std::string& reason) {
  return impl_->connections.tell_websockets_going_away(reason);
}

std::size_t HttpServer::requests_in_flight() const { return impl_->connections.in_flight; }

std::size_t HttpServer::websockets_open() const { return impl_->connections.websockets.size(); }

void HttpServer::stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  beast::error_code ec;
  if (impl_->acceptor) impl_->acceptor->close(ec);
  impl_->accept_pause.cancel();
  impl_->connections.end_streams();
  impl_->connections.close_all();
}

}  // namespace trainyard::net
