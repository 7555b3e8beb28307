#pragma once
// The daemon's answer to SIGTERM or SIGINT, in phases, each logged with its
// counts: stop accepting (new connections are refused) and stop ticking (no new attempts); answer
// the requests in flight, within the grace; tell the agents the daemon is going away (WebSocket
// 1001: they redial with their usual backoff and their attempts keep running, as across a
// restart); let the store worker commit what is queued and let the lease go; stop the loop, so the
// daemon exits 0. Agents are told last because an answer may wait on one (a log fetch). A second
// signal exits at once, with status 1.
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>

#include "daemon/base/store_worker.h"
#include "net/http_server.h"
#include "proto/time.h"

namespace trainyard::daemon {

class GracefulShutdown {
 public:
  // `quiesce` stops the daemon's own sources of work (ticks, webhook lanes) and saves what lives in
  // memory; it runs once, as the server stops accepting.
  GracefulShutdown(boost::asio::io_context& io, net::HttpServer& server, StoreWorker& store, Millis grace,
                   std::function<void()> quiesce);

 private:
  // Phases measure their waits on the monotonic clock: a step of the wall clock must not cut a
  // grace short or stretch it.
  using Clock = std::chrono::steady_clock;

  void begin(int signo);
  void tell_agents();
  void flush_store();
  void finish(std::uint64_t commits);
  void wait_until(std::function<bool()> done, Clock::time_point deadline, std::function<void()> then);
  std::int64_t elapsed_ms() const;

  boost::asio::io_context& io_;
  net::HttpServer& server_;
  StoreWorker& store_;
  Millis grace_;
  std::function<void()> quiesce_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer poll_;
  Clock::time_point started_;
};

}  // namespace trainyard::daemon
