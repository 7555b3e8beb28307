#pragma once
// An outbound HTTP/1.1 and HTTPS client for webhook deliveries: one POST at a
// time per call, a connect timeout and a total deadline, certificates verified against the
// system's trust store plus an optional CA file, idle connections kept alive per host and reused,
// redirects never followed (a 3xx is an answer like any other), and the response body read only up
// to a limit. Every address the host resolves to is offered to `check_address` before connecting,
// so a policy holds for the address actually dialled, not only the name registered (DNS
// rebinding). Callbacks run on the io_context's thread.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace boost::asio {
class io_context;
}

namespace trainyard::net {

struct OutboundRequest {
  bool tls = false;
  std::string host;
  std::uint16_t port = 0;
  std::string target = "/";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type = "application/json";
  std::string body;
  bool restricted = false;  // dial only addresses the client's check_address accepts
};

struct OutboundResponse {
  int status = 0;           // 0: no answer; `error` says why (resolve, connect, TLS, timeout, closed)
  std::string error;
  std::string retry_after;  // the Retry-After header as sent, "" without one
  std::string body;         // at most the client's body limit
  std::chrono::milliseconds latency{0};
};

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds total_timeout{10000};
  std::size_t max_response_body = 64 * 1024;
  std::string ca_file;  // trusted besides the system store; the flag that named it is `ca_from`
  std::string ca_from = "--webhook-ca-file";
  std::size_t max_idle_per_host = 4;
  // For restricted requests: "" when `address` (text, resolved for `host`) may be dialled, else why not.
  std::function<std::string(const std::string& host, const std::string& address)> check_address;
};

class HttpClient {
 public:
  // Throws InvalidInput(options.ca_from) when the CA file is unusable.
  HttpClient(boost::asio::io_context& io, HttpClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `request` as a POST; `done` runs exactly once.
  void post(OutboundRequest request, std::function<void(OutboundResponse)> done);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace trainyard::net
