#pragma once
// A small blocking HTTP/1.1 client for the CLI: one keep-alive connection to one server, reused
// across requests and re-opened when the server closed it. Beast lives only in http_client.cpp
// (its headers are expensive to compile); this header exposes plain values.
//
// Threading: an HttpClient is used from one thread at a time.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/http_types.h"
#include "net/tls.h"
#include "proto/result.h"

namespace trainyard::cli {

struct ServerUrl {
  std::string host;  // without IPv6 brackets
  std::string port;
  std::string text;  // as the user wrote it, for messages
  bool tls = false;  // https://: the server and its name are verified against `trust`
  net::TlsClientFiles trust;
};

// Parses "http[s]://HOST[:PORT][/]" (the scheme may be left out: http) with net::parse_url, the
// agent's parser too; throws InvalidInput("--server").
ServerUrl parse_server_url(const std::string& text);
// Each URL of "URL1,URL2,..." (active / standby daemons), parsed as above; throws InvalidInput("--server").
std::vector<ServerUrl> parse_server_urls(const std::string& text);

// net/'s values: the client sends a request's method, target, headers and body, and fills a
// response's status, content type and body.
using net::HttpRequest;
using net::HttpResponse;

// The response, or unavailable when the exchange did not complete: no connection, a timeout, a
// broken or garbled reply. The message is a sentence naming the server, fit to show as it is.
// The response's headers hold `location` when the server sent one.
using HttpResult = Result<HttpResponse>;

// The `field` of an unavailable error from connecting: nothing of the request was sent, so even a
// request that is not safe to repeat may go to another server.
inline constexpr std::string_view kNotConnected = "connection";

// Takes a piece of a streamed body as it arrives; false stops reading.
using BodySink = std::function<bool(std::string_view piece)>;

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  virtual HttpResult send(const HttpRequest& request) = 0;
  // For a body that goes on (Server-Sent Events): a 2xx answer's body goes to `sink` piece by
  // piece until the server ends it or `sink` returns false, and the returned response's body is
  // empty; any other answer is returned whole. A connection that fails midway is unavailable. A client that cannot stream hands the whole body over as one piece.
  virtual HttpResult stream(const HttpRequest& request, const BodySink& sink) {
    HttpResult result = send(request);
    if (result && result->status / 100 == 2) {
      sink(result->body);
      result->body.clear();
    }
    return result;
  }
};

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{5000};
  // For one whole exchange (write and read); generous because logs are fetched from the agents.
  std::chrono::milliseconds request_timeout{60000};
  std::size_t body_limit = std::size_t{256} << 20;
  // A stream silent this long (the daemon's SSE keep-alive comes every 15 s) is taken as lost.
  std::chrono::milliseconds stream_idle_timeout{45000};
};

// Throws InvalidInput naming the CA's source when an https URL's CA file cannot be used.
std::unique_ptr<HttpClient> make_http_client(ServerUrl url, HttpClientOptions options = {});

}  // namespace trainyard::cli
