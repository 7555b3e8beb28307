// The CLI's only Beast translation unit. Operations are Asio's asynchronous ones driven to
// completion on a private io_context, because only those honour beast::tcp_stream's deadlines;
// to the caller the client is blocking. An https:// server is spoken to over TLS, its certificate
// and name verified (net/tls.h).
#include "cli/http_client.h"

#include <sys/socket.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cerrno>
#include <optional>

namespace trainyard::cli {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

std::string describe(std::chrono::milliseconds d) {
  return d.count() % 1000 == 0 ? std::to_string(d.count() / 1000) + " s" : std::to_string(d.count()) + " ms";
}

bool is_idempotent(const std::string& method) { return method == "GET"; }

// What callers read of a response's headers: where a standby redirects to.
template <class Response>
std::vector<std::pair<std::string, std::string>> headers_of(const Response& response) {
  const auto location = response.find(http::field::location);
  if (location == response.end()) return {};
  return {{"location", std::string(location->value())}};
}

class BeastHttpClient final : public HttpClient {
 public:
  BeastHttpClient(ServerUrl url, HttpClientOptions options)
      : url_(std::move(url)), options_(options), tls_(url_.tls ? net::make_client_tls_context(url_.trust) : nullptr) {}

  HttpResult send(const HttpRequest& request) override {
    const auto message = to_beast(request);
    if (stream_open_ && peer_closed()) close();
    const bool reused = stream_open_;
    if (!stream_open_) {
      if (auto connected = connect(); !connected) return connected.error();
    }
    auto outcome = exchange(message);
    // A kept-alive connection may have been closed by the server just as we used it; a request
    // that is safe to repeat gets one fresh connection. Others are not repeated (the server may
    // have acted on them), nor are timeouts (the server is there, just slow).
    const auto* failure = std::get_if<beast::error_code>(&outcome);
    if (failure && *failure != beast::error::timeout && reused && is_idempotent(request.method)) {
      if (auto connected = connect(); !connected) return connected.error();
      outcome = exchange(message);
    }
    if (const auto* ec = std::get_if<beast::error_code>(&outcome)) return Error::unavailable(failure_message(*ec));
    return std::get<HttpResponse>(std::move(outcome));
  }

  // On a connection of its own, closed at the end: a streamed body ends with its connection.
  HttpResult stream(const HttpRequest& request, const BodySink& sink) override {
    if (auto connected = connect(); !connected) return connected.error();
    auto outcome = read_streamed(to_beast(request), sink);
    close();
    if (const auto* ec = std::get_if<beast::error_code>(&outcome)) return Error::unavailable(failure_message(*ec));
    return std::get<HttpResponse>(std::move(outcome));
  }

 private:
  http::request<http::string_body> to_beast(const HttpRequest& request) const {
    http::request<http::string_body> message;
    message.version(11);
    message.method_string(request.method);
    message.target(request.target);
    const bool ipv6 = url_.host.find(':') != std::string::npos;
    message.set(http::field::host, (ipv6 ? "[" + url_.host + "]" : url_.host) + ":" + url_.port);
    message.set(http::field::user_agent, "trainyard-cli");
    // net::HttpRequest holds names lower-cased; known fields go out in their usual spelling.
    for (const auto& [name, value] : request.headers) {
      if (const auto field = http::string_to_field(name); field != http::field::unknown) {
        message.set(field, value);
      } else {
        message.set(name, value);
      }
    }
    message.body() = request.body;
    message.prepare_payload();
    return message;
  }

  // Runs the io_context until the started operations have completed.
  void run() {
    ioc_.restart();
    ioc_.run();
  }

  // A kept-alive connection the server has since closed reads as end-of-file without blocking.
  bool peer_closed() {
    char byte = 0;
    const auto n = ::recv(lowest().socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  }

  void close() {
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().close();
    buffer_.clear();
    stream_open_ = false;
  }

  // Unavailable, saying why, when the connection could not be made.
  Result<void> connect() {
    close();
    const auto unreachable = [this](const std::string& why) {
      return Error{ErrorCode::unavailable, "cannot reach daemon at " + url_.text + ": " + why, std::string(kNotConnected)};
    };
    tcp::resolver resolver(ioc_);
    std::optional<beast::error_code> resolved;
    tcp::resolver::results_type endpoints;
    resolver.async_resolve(url_.host, url_.port, [&](beast::error_code ec, tcp::resolver::results_type r) {
      resolved = ec;
      endpoints = std::move(r);
    });
    ioc_.restart();
    ioc_.run_for(options_.connect_timeout);
    if (!resolved) {
      resolver.cancel();
      run();
      return unreachable("resolving " + url_.host + " took longer than " + describe(options_.connect_timeout));
    }
    if (*resolved) return unreachable("cannot resolve " + url_.host + ": " + resolved->message());

    // A TLS stream serves one connection only.
    if (tls_) tls_stream_ = std::make_unique<TlsStream>(ioc_, *tls_);
    beast::error_code connected;
    lowest().expires_after(options_.connect_timeout);
    lowest().async_connect(endpoints, [&](beast::error_code ec, const tcp::endpoint&) { connected = ec; });
    run();
    if (connected == beast::error::timeout)
      return unreachable("no connection within " + describe(options_.connect_timeout));
    if (connected) return unreachable(connected.message());
    stream_open_ = true;
    if (tls_stream_) {
      if (auto shaken = handshake(); !shaken) {
        close();
        return unreachable(shaken.error().message);
      }
    }
    return {};
  }

  Result<void> handshake() {
    net::expect_server_name(tls_stream_->native_handle(), url_.host);
    beast::error_code ec;
    lowest().expires_after(options_.connect_timeout);
    tls_stream_->async_handshake(asio::ssl::stream_base::client, [&](beast::error_code e) { ec = e; });
    run();
    if (!ec) return {};
    if (ec == beast::error::timeout)
      return Error::unavailable("no TLS handshake within " + describe(options_.connect_timeout));
    return Error::unavailable(net::describe_handshake_failure(SSL_get_verify_result(tls_stream_->native_handle()),
                                                              ec.message(), url_.host, "--ca-file or $TRAINYARD_CA"));
  }

  beast::tcp_stream& lowest() { return tls_stream_ ? beast::get_lowest_layer(*tls_stream_) : plain_; }

  // Calls `fn` with the stream requests go over: TLS or plain.
  template <class Fn>
  void on_stream(Fn&& fn) {
    if (tls_stream_) {
      fn(*tls_stream_);
    } else {
      fn(plain_);
    }
  }

  std::variant<HttpResponse, beast::error_code> exchange(const http::request<http::string_body>& message) {
    beast::error_code ec;
    lowest().expires_after(options_.request_timeout);
    on_stream([&](auto& stream) { http::async_write(stream, message, [&](beast::error_code e, std::size_t) { ec = e; }); });
    run();
    http::response_parser<http::string_body> parser;
    parser.body_limit(options_.body_limit);
    if (!ec) {
      on_stream([&](auto& stream) {
        http::async_read(stream, buffer_, parser, [&](beast::error_code e, std::size_t) { ec = e; });
      });
      run();
    }
    if (ec) {
      close();
      return ec;
    }
    const auto& response = parser.get();
    if (!response.keep_alive()) close();
    return HttpResponse{.status = static_cast<int>(response.result_int()),
                        .content_type = std::string(response[http::field::content_type]),
                        .body = response.body(),
                        .headers = headers_of(response)};
  }

  std::variant<HttpResponse, beast::error_code> read_streamed(const http::request<http::string_body>& message,
                                                              const BodySink& sink) {
    beast::error_code ec;
    lowest().expires_after(options_.request_timeout);
    on_stream(
        [&](auto& stream) { http::async_write(stream, message, [&](beast::error_code e, std::size_t) { ec = e; }); });
    run();
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(boost::none);
    if (!ec) {
      on_stream([&](auto& stream) {
        http::async_read_header(stream, buffer_, parser, [&](beast::error_code e, std::size_t) { ec = e; });
      });
      run();
    }
    if (ec) return ec;
    HttpResponse response{.status = static_cast<int>(parser.get().result_int()),
                          .content_type = std::string(parser.get()[http::field::content_type]),
                          .body = {},
                          .headers = headers_of(parser.get())};
    const bool streamed = response.status / 100 == 2;
    char piece[16 * 1024];
    while (!parser.is_done()) {
      parser.get().body().data = piece;
      parser.get().body().size = sizeof piece;
      lowest().expires_after(streamed ? options_.stream_idle_timeout : options_.request_timeout);
      // read_some: a live stream's pieces are handed on as they come, not once the buffer is full.
      on_stream([&](auto& stream) {
        http::async_read_some(stream, buffer_, parser, [&](beast::error_code e, std::size_t) { ec = e; });
      });
      run();
      if (ec == http::error::need_buffer) ec = {};
      const std::string_view text(piece, sizeof piece - parser.get().body().size);
      if (!streamed) {
        if (response.body.size() + text.size() > options_.body_limit) return make_error_code(http::error::body_limit);
        response.body += text;
      } else if (!text.empty() && !sink(text)) {
        break;
      }
      if (ec) return ec;
    }
    return response;
  }

  std::string failure_message(const beast::error_code& ec) const {
    const std::string daemon = "daemon at " + url_.text;
    if (ec == beast::error::timeout) return daemon + " did not answer within " + describe(options_.request_timeout);
    if (ec == http::error::body_limit) {
      return "the reply of " + daemon + " is larger than " + std::to_string(options_.body_limit) + " bytes";
    }
    if (ec == http::error::end_of_stream || ec == http::error::partial_message || ec == asio::ssl::error::stream_truncated) {
      return "lost the connection to " + daemon + ": it closed the connection before answering in full";
    }
    if (ec.category() == http::make_error_code(http::error::bad_version).category()) return "garbled reply from " + daemon + ": " + ec.message();
    return "lost the connection to " + daemon + ": " + ec.message();
  }

  ServerUrl url_;
  HttpClientOptions options_;
  net::TlsContext tls_;  // null: plain HTTP
  asio::io_context ioc_;
  beast::tcp_stream plain_{ioc_};
  std::unique_ptr<TlsStream> tls_stream_;  // over TLS, the current connection's
  beast::flat_buffer buffer_;
  bool stream_open_ = false;
};

}  // namespace

std::unique_ptr<HttpClient> make_http_client(ServerUrl url, HttpClientOptions options) {
  return std::make_unique<BeastHttpClient>(std::move(url), options);
}

}  // namespace trainyard::cli
