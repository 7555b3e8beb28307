#include "daemon/standby.h"

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <algorithm>
#include <cstdlib>
#include <random>
#include <thread>

#include <spdlog/spdlog.h>

#include "daemon/gateway.h"

namespace trainyard::daemon {
namespace {

namespace asio = boost::asio;

// RFC 9457 problem details, with the API's own error object beside them for clients that read that.
net::HttpResponse problem(int status, const std::string& title, const std::string& detail, const store::LeaseState& lease) {
  net::HttpResponse response;
  response.status = status;
  response.content_type = "application/problem+json";
  response.body = Json{{"type", "about:blank"},
                       {"title", title},
                       {"status", status},
                       {"detail", detail},
                       {"role", "standby"},
                       {"epoch", lease.epoch},
                       {"active_url", lease.active_url},
                       {"error", {{"code", "standby"}, {"message", detail}}}}
                      .dump();
  return response;
}

std::string without_trailing_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

}  // namespace

Json healthz_body(const std::string& version, bool active, const store::LeaseState& lease,
                  const std::optional<std::string>& store_problem) {
  Json body = {{"status", store_problem ? "degraded" : "ok"},
               {"version", version},
               {"role", active ? "active" : "standby"},
               {"epoch", lease.epoch},
               {"active_url", lease.active_url}};
  if (store_problem) body["store"] = *store_problem;
  return body;
}

net::HttpResponse standby_answer(const net::HttpRequest& request, const store::LeaseState& lease,
                                 const std::string& own_url, const std::string& version) {
  if (request.method == "GET" && request.path == "/healthz") {
    return net::HttpResponse{.status = 200, .body = healthz_body(version, false, lease).dump()};
  }
  if (lease.active_url.empty() || without_trailing_slash(lease.active_url) == without_trailing_slash(own_url)) {
    net::HttpResponse response =
        problem(503, "No active daemon", "this daemon is a standby and knows of no active daemon yet; try again", lease);
    response.headers.emplace_back("Retry-After", "1");
    return response;
  }
  const std::string location = without_trailing_slash(lease.active_url) + request.target;
  net::HttpResponse response = problem(
      307, "Standby daemon", "this daemon is a standby; the active daemon is " + lease.active_url, lease);
  response.headers.emplace_back("Location", location);
  return response;
}

ActiveLease::ActiveLease(std::int64_t epoch, Millis ttl, MonoTime taken_at)
    : epoch_(epoch), ttl_(ttl), held_until_(taken_at + ttl) {}

Result<void> ActiveLease::renewed(MonoTime sent_at, const store::LeaseState& answer) {
  if (!answer.held || answer.epoch != epoch_) {
    return Error::conflict("the lease is held at epoch " + std::to_string(answer.epoch) + " by " +
                           (answer.active_url.empty() ? std::string("nobody") : answer.active_url));
  }
  held_until_ = std::max(held_until_, sent_at + ttl_);
  return {};
}

Result<void> ActiveLease::still_held(MonoTime now) const {
  if (now < held_until_) return {};
  return Error::unavailable("no renewal confirmed within the lease's " + std::to_string(ttl_.count()) + " ms");
}

std::optional<std::string> ActiveLease::store_problem(MonoTime now) const {
  const auto silent = std::chrono::duration_cast<Millis>(now - (held_until_ - ttl_));
  if (silent <= 2 * renew_every()) return std::nullopt;
  const auto left = std::max(Millis(0), std::chrono::duration_cast<Millis>(held_until_ - now));
  return "the store confirmed no lease renewal for " + std::to_string(silent.count()) +
         " ms: writes wait, and the lease runs out in " + std::to_string(left.count()) +
         " ms, when this daemon stops and a standby takes over";
}

void exit_on_lease_lost(const std::string& reason) {
  spdlog::critical("event=lease_lost reason=\"{}\" exit_status={} hint=\"another daemon is active; restart this one "
                   "to serve as a standby\"",
                   reason, kLeaseLostExitStatus);
  spdlog::default_logger()->flush();
  std::_Exit(kLeaseLostExitStatus);
}

std::string listening_url(bool tls, const std::string& host, unsigned short port) {
  return (tls ? "https://" : "http://") + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
         std::to_string(port);
}

std::string lease_holder_id() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::random_device random;
  return std::string(host) + "/" + std::to_string(::getpid()) + "/" + std::to_string(random());
}

Activation serve_as_standby_until_active(store::Store& store, const StandbySetup& setup) {
  const std::string listening = listening_url(setup.server.tls.enabled(), setup.host, setup.port);
  Activation activation{.port = setup.port, .advertise_url = setup.advertise_url.empty() ? listening : setup.advertise_url};
  using Clock = std::chrono::steady_clock;
  const auto try_lease = [&]() -> std::optional<store::LeaseState> {
    try {
      const auto lease = store.acquire_or_renew(setup.holder, activation.advertise_url, setup.lease_ttl);
      return lease ? *lease : store::LeaseState{.held = true, .active_url = activation.advertise_url};  // one daemon
    } catch (const store::StoreError& e) {
      spdlog::warn("event=lease_attempt_failed error=\"{}\"", e.what());
      return std::nullopt;
    }
  };
  const auto began = Clock::now();
  auto attempt = began;
  std::optional<store::LeaseState> lease = try_lease();
  const auto taken = [&] {
    activation.lease = *lease;
    activation.sent_at = std::chrono::time_point_cast<Millis>(attempt);
    return activation;
  };
  // A free lease is taken before the port is served at all: a daemon starting alone never closes
  // its port between serving as a standby and as the active daemon.
  if (lease && lease->held) return taken();

  asio::io_context io(1);
  store::LeaseState seen;  // on the I/O thread
  const std::string& version = setup.version;
  net::WebSocketRoute agents;
  agents.path = kAgentPath;
  agents.authorize = [&](const net::HttpRequest& request) -> std::optional<net::HttpResponse> {
    return standby_answer(request, seen, activation.advertise_url, version);
  };
  agents.open = [](const net::HttpRequest&, std::shared_ptr<net::WebSocketPeer>) -> std::shared_ptr<net::WebSocketSession> {
    return nullptr;  // never: authorize refuses every upgrade
  };
  net::HttpServer server(
      io, setup.server,
      [&](net::HttpRequest request, net::HttpResponder respond) {
        respond(standby_answer(request, seen, activation.advertise_url, version));
      },
      {agents});
  // As the active daemon does, before daemon.addr appears: SIGHUP reloads the TLS files, never ends it.
  asio::signal_set reload(io, SIGHUP);
  std::function<void()> await_reload = [&] {
    reload.async_wait([&](const boost::system::error_code& ec, int) {
      if (ec) return;
      const Result<void> reloaded = setup.server.tls.enabled() ? server.reload_tls() : Result<void>{};
      spdlog::info("event=standby_sighup tls_reload_error=\"{}\"", reloaded ? "" : reloaded.error().message);
      await_reload();
    });
  };
  await_reload();
  server.listen(setup.host, setup.port);
  if (setup.on_listening) setup.on_listening(listening);
  std::thread serving([&io] { io.run(); });

  store::LeaseState last;
  bool announced = false;
  while (!lease || !lease->held) {
    if (lease && (!announced || *lease != last)) {
      spdlog::info("event=standby url={} epoch={} active_url={}", activation.advertise_url, lease->epoch,
                   lease->active_url.empty() ? "unknown" : lease->active_url);
      announced = true;
      last = *lease;
      asio::post(io, [&seen, now_seen = *lease] { seen = now_seen; });
    }
    std::this_thread::sleep_until(attempt + setup.lease_ttl / 5);
    attempt = Clock::now();
    lease = try_lease();
  }
  asio::post(io, [&server, &io] {
    server.stop();
    io.stop();
  });
  serving.join();
  spdlog::info("event=standby_taking_over epoch={} waited_ms={}", lease->epoch,
               std::chrono::duration_cast<Millis>(Clock::now() - began).count());
  return taken();
}

}  // namespace trainyard::daemon
