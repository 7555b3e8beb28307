#pragma once
// The daemons of `--server URL1,URL2,...` (one active, the others standbys) spoken to as one
// HttpClient. A request goes to the daemon that answered last; on no connection or a 503 it moves
// to the next URL, follows a standby's 307 to a URL of the list (at most 3 hops), and never sends
// the token anywhere else (net/server_list.h has the choice). An error names every URL tried.
// A request that is not safe to repeat (a submit) moves on only when it was never sent. With one
// URL the server's own answer or error is returned as it is, as before failover existed.
//
// Threading: used from one thread at a time, like the clients it holds.
#include <functional>
#include <memory>
#include <vector>

#include "cli/http_client.h"
#include "net/server_list.h"

namespace trainyard::cli {

class FailoverClient final : public HttpClient {
 public:
  using Connect = std::function<std::unique_ptr<HttpClient>(const ServerUrl&)>;
  // `servers` not empty; `connect` makes the client of one (it connects when first used, and may
  // throw InvalidInput for an unusable CA file).
  FailoverClient(std::vector<ServerUrl> servers, const Connect& connect);

  HttpResult send(const HttpRequest& request) override;
  // A stream that broke after some of its body reached `sink` is not restarted here (the caller
  // resumes it from what it got); the next call starts at the next URL.
  HttpResult stream(const HttpRequest& request, const BodySink& sink) override;

 private:
  // Tries `request` on the daemons in turn with `exchange(client, delivered)`, which sets
  // `delivered` once part of a streamed body was handed on (such a try is not repeated).
  HttpResult route(const HttpRequest& request, const std::function<HttpResult(HttpClient&, bool& delivered)>& exchange);

  std::size_t server_count_;
  net::Failover failover_;
  std::vector<std::unique_ptr<HttpClient>> clients_;  // in the order of the servers
};

}  // namespace trainyard::cli
