#include "daemon/graceful_shutdown.h"

#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdlib>

namespace trainyard::daemon {
namespace {

// The agents' close handshakes are awaited apart from the grace, which requests may have used up.
constexpr Millis kAgentCloseWait{2000};
constexpr Millis kPollInterval{10};

}  // namespace

GracefulShutdown::GracefulShutdown(boost::asio::io_context& io, net::HttpServer& server, StoreWorker& store,
                                   Millis grace, std::function<void()> quiesce)
    : io_(io),
      server_(server),
      store_(store),
      grace_(grace),
      quiesce_(std::move(quiesce)),
      signals_(io, SIGINT, SIGTERM),
      poll_(io) {
  signals_.async_wait([this](const boost::system::error_code& ec, int signo) {
    if (!ec) begin(signo);
  });
}

void GracefulShutdown::begin(int signo) {
  started_ = Clock::now();
  signals_.async_wait([](const boost::system::error_code& ec, int again) {
    if (ec) return;
    spdlog::warn("event=shutdown_forced signal={}", again);
    spdlog::default_logger()->flush();
    std::_Exit(1);
  });
  const std::size_t idle_closed = server_.stop_accepting();
  quiesce_();
  spdlog::info(
      "event=shutdown_started signal={} grace_ms={} requests_in_flight={} idle_connections_closed={} "
      "agents_connected={}",
      signo, grace_.count(), server_.requests_in_flight(), idle_closed, server_.websockets_open());
  const std::size_t in_flight = server_.requests_in_flight();
  wait_until([this] { return server_.requests_in_flight() == 0; }, started_ + grace_, [this, in_flight] {
    spdlog::info("event=shutdown_requests_answered answered={} unanswered={} waited_ms={}",
                 in_flight - server_.requests_in_flight(), server_.requests_in_flight(), elapsed_ms());
    tell_agents();
  });
}

void GracefulShutdown::tell_agents() {
  const std::size_t told = server_.tell_websockets_going_away("daemon shutting down");
  wait_until([this] { return server_.websockets_open() == 0; }, Clock::now() + kAgentCloseWait, [this, told] {
    spdlog::info("event=shutdown_agents_told agents={} closed={} waited_ms={}", told, told - server_.websockets_open(),
                 elapsed_ms());
    flush_store();
  });
}

// A read runs after every write queued before it: its continuation means they are committed. Then
// the lease (active / standby) is let go, so a standby takes over now rather than a ttl later.
void GracefulShutdown::flush_store() {
  const std::uint64_t commits_before = store_.commits();
  store_.read(
      [this, commits_before](store::Store& store) -> StoreWorker::Continuation {
        store.release_lease();
        return [this, commits_before] { finish(store_.commits() - commits_before); };
      },
      [this](const Error& error) {
        spdlog::error("event=shutdown_store_flush_failed error=\"{}\"", error.message);
        finish(0);
      });
}

void GracefulShutdown::finish(std::uint64_t commits) {
  spdlog::info("event=shutdown_complete store_commits={} total_ms={}", commits, elapsed_ms());
  io_.stop();
}

void GracefulShutdown::wait_until(std::function<bool()> done, Clock::time_point deadline, std::function<void()> then) {
  if (done() || Clock::now() >= deadline) return then();
  poll_.expires_after(kPollInterval);
  poll_.async_wait(
      [this, done = std::move(done), deadline, then = std::move(then)](const boost::system::error_code& ec) mutable {
        if (!ec) wait_until(std::move(done), deadline, std::move(then));
      });
}

std::int64_t GracefulShutdown::elapsed_ms() const {
  return std::chrono::duration_cast<Millis>(Clock::now() - started_).count();
}

}  // namespace trainyard::daemon
