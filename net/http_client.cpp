#include "net/http_client.h"

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
#include <map>
#include <tuple>
#include <variant>

#include "net/awaitable.h"
#include "net/tls.h"
#include "proto/errors.h"

namespace trainyard::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// One connection, plain or TLS; kept for reuse only after a complete keep-alive exchange.
using Stream = std::variant<std::unique_ptr<beast::tcp_stream>, std::unique_ptr<TlsStream>>;

beast::tcp_stream& lowest(Stream& s) {
  return std::visit([](auto& p) -> beast::tcp_stream& { return beast::get_lowest_layer(*p); }, s);
}

// The system's trust store and, when given, one more CA file.
std::shared_ptr<asio::ssl::context> webhook_tls_context(const HttpClientOptions& options) {
  auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
  context->set_options(asio::ssl::context::no_sslv2 | asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                       asio::ssl::context::no_tlsv1_1);
  context->set_verify_mode(asio::ssl::verify_peer);
  beast::error_code ec;
  context->set_default_verify_paths(ec);
  if (!options.ca_file.empty()) {
    context->load_verify_file(options.ca_file, ec);
    if (ec) throw InvalidInput(options.ca_from, "\"" + options.ca_file + "\" holds no usable PEM CA certificate");
  }
  return context;
}

}  // namespace

struct HttpClient::Impl : std::enable_shared_from_this<HttpClient::Impl> {
  using Key = std::tuple<bool, bool, std::string, std::uint16_t>;  // restricted, tls, host, port

  Impl(asio::io_context& io_, HttpClientOptions options_)
      : io(io_), options(std::move(options_)), tls(webhook_tls_context(options)) {}

  asio::awaitable<void> run(OutboundRequest request, std::function<void(OutboundResponse)> done) {
    auto self = shared_from_this();
    const auto started = Clock::now();
    OutboundResponse response = co_await exchange(request, started + options.total_timeout);
    response.latency = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
    done(std::move(response));
  }

  struct Connection {
    std::optional<Stream> stream;
    std::string error;  // when there is no stream
    bool reused = false;
  };

  // A kept connection to the host, or a new one.
  asio::awaitable<Connection> connection(const OutboundRequest& r, Clock::time_point deadline) {
    auto& idle_list = idle[Key{r.restricted, r.tls, r.host, r.port}];
    if (!idle_list.empty()) {
      Connection kept{std::move(idle_list.back()), "", true};
      idle_list.pop_back();
      co_return kept;
    }
    tcp::resolver resolver(io);
    auto [rec, results] = co_await resolver.async_resolve(r.host, std::to_string(r.port), use_tuple);
    if (rec) co_return Connection{std::nullopt, "cannot resolve " + r.host + ": " + rec.message()};
    std::vector<tcp::endpoint> allowed;
    std::string refused;
    for (const auto& entry : results) {
      const std::string address = entry.endpoint().address().to_string();
      const std::string why = r.restricted && options.check_address ? options.check_address(r.host, address) : "";
      if (why.empty()) {
        allowed.push_back(entry.endpoint());
      } else {
        refused = why;
      }
    }
    if (allowed.empty()) co_return Connection{std::nullopt, "refused to connect to " + r.host + ": " + refused};
    Stream stream = r.tls ? Stream(std::make_unique<TlsStream>(io, *tls)) : Stream(std::make_unique<beast::tcp_stream>(io));
    lowest(stream).expires_at(std::min(deadline, Clock::now() + options.connect_timeout));
    auto [cec, ep] = co_await lowest(stream).async_connect(allowed, use_tuple);
    if (cec) {
      co_return Connection{std::nullopt, "cannot connect to " + r.host + ":" + std::to_string(r.port) + ": " +
                                             (cec == beast::error::timeout ? "connect timed out" : cec.message())};
    }
    lowest(stream).socket().set_option(tcp::no_delay(true));
    if (auto* secure = std::get_if<std::unique_ptr<TlsStream>>(&stream)) {
      expect_server_name((*secure)->native_handle(), r.host);
      lowest(stream).expires_at(deadline);
      auto [tec] = co_await (*secure)->async_handshake(asio::ssl::stream_base::client, use_tuple);
      if (tec) {
        co_return Connection{std::nullopt, "TLS with " + r.host + " failed: " +
                                               describe_handshake_failure(SSL_get_verify_result((*secure)->native_handle()),
                                                                          tec.message(), r.host, options.ca_from)};
      }
    }
    co_return Connection{std::move(stream), "", false};
  }

  template <class S>
  asio::awaitable<OutboundResponse> send_on(S& stream, const OutboundRequest& r, Clock::time_point deadline, bool& reusable) {
    OutboundResponse out;
    http::request<http::string_body> req{http::verb::post, r.target, 11};
    req.set(http::field::host, r.host + ":" + std::to_string(r.port));
    req.set(http::field::user_agent, "trainyard-webhooks");
    req.set(http::field::content_type, r.content_type);
    for (const auto& [name, value] : r.headers) req.set(name, value);
    req.keep_alive(true);
    req.body() = r.body;
    req.prepare_payload();
    beast::get_lowest_layer(stream).expires_at(deadline);
    auto [wec, written] = co_await http::async_write(stream, req, use_tuple);
    if (wec) {
      out.error = wec == beast::error::timeout ? "timed out sending" : "send failed: " + wec.message();
      co_return out;
    }
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(options.max_response_body);
    auto [hec, header_bytes] = co_await http::async_read_header(stream, buffer, parser, use_tuple);
    if (hec) {
      out.error = hec == beast::error::timeout ? "timed out waiting for the answer" : "no answer: " + hec.message();
      co_return out;
    }
    out.status = static_cast<int>(parser.get().result_int());
    if (auto it = parser.get().find(http::field::retry_after); it != parser.get().end()) out.retry_after = std::string(it->value());
    auto [bec, body_bytes] = co_await http::async_read(stream, buffer, parser, use_tuple);
    if (bec == http::error::body_limit) {
      out.body = "(answer longer than the limit; not read)";
      co_return out;  // the rest is unread: the connection is not reused
    }
    if (bec) {
      // No whole answer is no answer (status 0): a receiver that fails mid-answer may not have
      // acted on the request, so it is sent again (at least once).
      out.status = 0;
      out.error = "answer cut short: " + bec.message();
      co_return out;
    }
    out.body = std::move(parser.get().body());
    reusable = parser.get().keep_alive();
    co_return out;
  }

  asio::awaitable<OutboundResponse> exchange(const OutboundRequest& r, Clock::time_point deadline) {
    // A kept connection the server has meanwhile closed fails at once; one fresh try follows.
    for (int round = 0; round < 2; ++round) {
      if (round > 0) idle.erase(Key{r.restricted, r.tls, r.host, r.port});
      Connection c = co_await connection(r, deadline);
      if (!c.stream) co_return OutboundResponse{0, c.error};
      std::optional<Stream>& stream = c.stream;
      bool reusable = false;
      OutboundResponse response =
          co_await std::visit([&](auto& p) { return send_on(*p, r, deadline, reusable); }, *stream);
      if (response.status == 0 && c.reused && Clock::now() < deadline) continue;
      if (reusable) {
        auto& idle_list = idle[Key{r.restricted, r.tls, r.host, r.port}];
        if (idle_list.size() < options.max_idle_per_host) {
          lowest(*stream).expires_never();
          idle_list.push_back(std::move(*stream));
        }
      }
      co_return response;
    }
    co_return OutboundResponse{0, "connection closed"};
  }

  asio::io_context& io;
  HttpClientOptions options;
  std::shared_ptr<asio::ssl::context> tls;
  std::map<Key, std::vector<Stream>> idle;
};

HttpClient::HttpClient(asio::io_context& io, HttpClientOptions options)
    : impl_(std::make_shared<Impl>(io, std::move(options))) {}

HttpClient::~HttpClient() = default;

void HttpClient::post(OutboundRequest request, std::function<void(OutboundResponse)> done) {
  asio::co_spawn(impl_->io, impl_->run(std::move(request), std::move(done)), asio::detached);
}

}  // namespace trainyard::net
