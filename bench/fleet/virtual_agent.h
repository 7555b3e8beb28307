#pragma once
// One virtual node of the fleet simulator: a real agent's side of the protocol (proto/messages.h
// over net's WebSocket client) without processes or a device. It joins with the join token,
// answers health checks as a healthy node would, runs launched attempts as virtual jobs
// (virtual_job.h), heartbeats their progress when the fleet's ticker asks, and obeys kills.
// Everything runs on the fleet's one I/O thread.
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "bench/fleet/virtual_job.h"
#include "net/ws_client.h"

namespace trainyard::fleet {

using Clock = std::chrono::steady_clock;

// What the agents of one fleet share: where to connect, and where they report what happened.
struct FleetLink {
  std::string connect_url;  // http://HOST:PORT/v1/agent/connect
  std::string join_token;
  int cores = 32;
  // Called on the I/O thread.
  std::function<void(Millis heartbeat_interval)> on_welcomed;
  // `was_welcomed`: it had joined (else its connect or hello failed).
  std::function<void(const std::string& node, const std::string& reason, bool was_welcomed)> on_closed;
  std::function<void(JobId job, Clock::time_point started)> on_attempt_started;
};

// Counted on the I/O thread, read by the thread that measures.
struct FleetCounters {
  std::atomic<std::int64_t> heartbeats = 0;
  std::atomic<std::int64_t> launches = 0;
  std::atomic<std::int64_t> exits_succeeded = 0;
  std::atomic<std::int64_t> exits_failed = 0;
  std::atomic<std::int64_t> kills = 0;
  std::atomic<std::int64_t> health_checks = 0;
  std::atomic<std::int64_t> refused_launches = 0;
};

class VirtualAgent {
 public:
  VirtualAgent(boost::asio::io_context& io, FleetLink& link, FleetCounters& counters, std::string name,
               std::string local_address);

  void connect();
  void close();
  bool welcomed() const { return welcomed_; }
  // Sends a heartbeat with the progress of every running attempt (when welcomed).
  void heartbeat(Clock::time_point now);
  // Ends the attempts whose virtual jobs exit by `now`.
  void advance(Clock::time_point now);

 private:
  struct Running {
    JobId job = 0;
    VirtualJob behaviour;
    Clock::time_point launched;
    TimePoint launched_wall;
  };

  void on_message(std::string text);
  void on_launch(const LaunchMsg& launch);
  void on_kill(const KillMsg& kill);
  void on_health_check(const HealthCheckMsg& check);
  void send(const AgentMessage& message);

  boost::asio::io_context& io_;
  FleetLink& link_;
  FleetCounters& counters_;
  const std::string name_;
  const std::string local_address_;
  std::shared_ptr<net::WebSocketClient> socket_;
  bool welcomed_ = false;
  std::map<AttemptId, Running> running_;
};

}  // namespace trainyard::fleet
