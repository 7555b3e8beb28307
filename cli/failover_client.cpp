#include "cli/failover_client.h"

#include <algorithm>

namespace trainyard::cli {
namespace {

std::vector<std::string> texts_of(const std::vector<ServerUrl>& servers) {
  std::vector<std::string> texts;
  for (const auto& server : servers) texts.push_back(server.text);
  return texts;
}

std::string location_of(const HttpResponse& response) {
  const auto it = std::find_if(response.headers.begin(), response.headers.end(),
                               [](const auto& header) { return header.first == "location"; });
  return it == response.headers.end() ? std::string() : it->second;
}

// Whether a failed try may be repeated elsewhere: always when nothing was sent, else only for a
// request that does nothing (a submit that broke midway may have been committed).
bool may_repeat(const HttpRequest& request, const Error& error) {
  return error.field == kNotConnected || request.method == "GET";
}

}  // namespace

FailoverClient::FailoverClient(std::vector<ServerUrl> servers, const Connect& connect)
    : server_count_(servers.size()), failover_(texts_of(servers)) {
  for (const auto& server : servers) clients_.push_back(connect(server));
}

HttpResult FailoverClient::send(const HttpRequest& request) {
  return route(request, [&](HttpClient& client, bool&) { return client.send(request); });
}

HttpResult FailoverClient::stream(const HttpRequest& request, const BodySink& sink) {
  return route(request, [&](HttpClient& client, bool& delivered) {
    return client.stream(request, [&](std::string_view piece) {
      delivered = true;
      return sink(piece);
    });
  });
}

HttpResult FailoverClient::route(const HttpRequest& request,
                                 const std::function<HttpResult(HttpClient&, bool& delivered)>& exchange) {
  failover_.begin_round();
  for (;;) {
    bool delivered = false;
    HttpResult result = exchange(*clients_[failover_.current_index()], delivered);
    const net::TryOutcome outcome = result ? net::outcome_of_status(result->status, location_of(*result))
                                           : net::TryOutcome{net::TryOutcome::Kind::unreachable, "", result.error().message};
    if (!result && (delivered || !may_repeat(request, result.error()))) {
      failover_.failed(outcome);  // the next request starts at the next daemon
      if (delivered || server_count_ == 1) return result;
      return Error::unavailable(result.error().message + "; not sent to another daemon, as this one may have acted on it");
    }
    if (outcome.kind == net::TryOutcome::Kind::answered) {
      failover_.answered();
      return result;
    }
    const net::FailoverStep step = failover_.failed(outcome);
    if (step.kind == net::FailoverStep::Kind::try_next) continue;
    // One daemon: its own words say it best ("cannot reach daemon at ...", its 503).
    if (step.kind == net::FailoverStep::Kind::exhausted && server_count_ == 1) return result;
    return Error::unavailable(step.message);
  }
}

}  // namespace trainyard::cli
