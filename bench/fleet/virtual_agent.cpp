#include "bench/fleet/virtual_agent.h"

#include <spdlog/spdlog.h>

#include "healthcheck/health_json.h"
#include "healthcheck/results.h"
#include "proto/errors.h"

namespace trainyard::fleet {
namespace {

TimePoint wall_now() { return std::chrono::time_point_cast<Millis>(std::chrono::system_clock::now()); }

Millis since(Clock::time_point start, Clock::time_point now) {
  return std::chrono::duration_cast<Millis>(now - start);
}

// What a healthy node's accelerator suite reports: every test passed on every core.
Json healthy_accelerator_report(int cores) {
  healthcheck::AcceleratorReport report;
  for (int core = 0; core < cores; ++core) {
    healthcheck::CoreResult result{core, {}};
    for (auto test : {healthcheck::AcceleratorTest::gemm, healthcheck::AcceleratorTest::stochastic_rounding,
                      healthcheck::AcceleratorTest::memory}) {
      result.checks.push_back(healthcheck::CheckResult{test, healthcheck::CheckStatus::passed, 0, 1, 0.1, ""});
    }
    report.cores.push_back(result);
  }
  report.duration_ms = 1;
  return healthcheck::to_json(report);
}

// And its collective suite: every collective exact, at the same bandwidth on every rank, so no
// rank looks slower than the others.
Json healthy_collective_result(int rank, int world) {
  healthcheck::RankCollectiveResult result;
  result.rank = rank;
  result.world_size = world;
  constexpr double kBytes = 1 << 20;
  constexpr double kSeconds = 0.001;
  for (auto kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    result.collectives.push_back(healthcheck::CollectiveMeasurement{kind, true, static_cast<std::size_t>(kBytes), kSeconds,
                                                                busbw(kind, world, kBytes, kSeconds), ""});
  }
  return healthcheck::to_json(result);
}

}  // namespace

VirtualAgent::VirtualAgent(boost::asio::io_context& io, FleetLink& link, FleetCounters& counters, std::string name,
                           std::string local_address)
    : io_(io), link_(link), counters_(counters), name_(std::move(name)), local_address_(std::move(local_address)) {}

void VirtualAgent::connect() {
  net::WebSocketClientHandlers handlers;
  handlers.on_open = [this] {
    HelloMsg hello;
    hello.agent_version = "fleet-simulator";
    hello.name = name_;
    hello.cores = link_.cores;
    hello.memory_mb = 512 * 1024;
    hello.labels = {{"fleet", "virtual"}};
    hello.data_addr = local_address_ + ":1";  // never dialled: virtual jobs run no collectives
    send(hello);
  };
  handlers.on_message = [this](std::string text) { on_message(std::move(text)); };
  handlers.on_closed = [this](const std::string& reason) {
    const bool was_welcomed = std::exchange(welcomed_, false);
    socket_.reset();
    if (link_.on_closed) link_.on_closed(name_, reason, was_welcomed);
  };
  socket_ = net::WebSocketClient::connect(io_, link_.connect_url, {{"Authorization", "Bearer " + link_.join_token}},
                                          std::move(handlers), nullptr, local_address_);
}

void VirtualAgent::close() {
  if (socket_) socket_->close("fleet simulator done");
}

void VirtualAgent::send(const AgentMessage& message) {
  if (socket_) socket_->send(encode(message));
}

void VirtualAgent::on_message(std::string text) {
  DaemonMessage message;
  try {
    message = parse_daemon_message(text);
  } catch (const InvalidInput& e) {
    spdlog::warn("event=bad_daemon_message node={} error=\"{}\"", name_, e.what());
    return;
  }
  std::visit(
      [this](const auto& msg) {
        using T = std::decay_t<decltype(msg)>;
        if constexpr (std::is_same_v<T, WelcomeMsg>) {
          welcomed_ = true;
          if (link_.on_welcomed) link_.on_welcomed(Millis(msg.heartbeat_interval_ms));
        } else if constexpr (std::is_same_v<T, RefusedMsg>) {
          spdlog::error("event=refused node={} reason=\"{}\"", name_, msg.reason);
        } else if constexpr (std::is_same_v<T, LaunchMsg>) {
          on_launch(msg);
        } else if constexpr (std::is_same_v<T, KillMsg>) {
          on_kill(msg);
        } else if constexpr (std::is_same_v<T, HealthCheckMsg>) {
          on_health_check(msg);
        } else if constexpr (std::is_same_v<T, LogRequestMsg>) {
          send(LogReplyMsg{msg.request_id, msg.attempt_id, "virtual job\n", "", 12, false});
        } else if constexpr (std::is_same_v<T, SetFaultsMsg>) {
          send(FaultsMsg{msg.faults});
        }
      },
      message);
}

void VirtualAgent::on_launch(const LaunchMsg& launch) {
  if (running_.contains(launch.attempt_id)) return;  // a duplicate launch starts nothing, as in agent/
  ++counters_.launches;
  try {
    VirtualJob behaviour = VirtualJob::from_argv(launch.command.argv);
    const Clock::time_point now = Clock::now();
    running_.emplace(launch.attempt_id, Running{launch.job_id, behaviour, now, wall_now()});
    send(AttemptStartedMsg{launch.attempt_id, {}});
    if (link_.on_attempt_started) link_.on_attempt_started(launch.job_id, now);
  } catch (const InvalidInput& e) {
    // What a real agent reports for a program it cannot start.
    ++counters_.refused_launches;
    AttemptExitedMsg exit;
    exit.attempt_id = launch.attempt_id;
    exit.exit_code = 127;
    exit.reason = e.what();
    send(exit);
  }
}

void VirtualAgent::on_kill(const KillMsg& kill) {
  auto it = running_.find(kill.attempt_id);
  if (it == running_.end()) return;  // not running (never launched, or already exited): ignored, as in agent/
  ++counters_.kills;
  send(it->second.behaviour.killed_report(kill.attempt_id, since(it->second.launched, Clock::now()), kill.reason));
  running_.erase(it);
}

void VirtualAgent::on_health_check(const HealthCheckMsg& check) {
  ++counters_.health_checks;
  HealthResultMsg result;
  result.task_id = check.task_id;
  if (check.suite == HealthSuite::accelerator) {
    result.result = running_.empty() ? healthy_accelerator_report(link_.cores) : Json();
    if (!running_.empty()) result.error = std::string(kNodeBusyForHealthCheck);
  } else {
    result.result = healthy_collective_result(check.rank, static_cast<int>(check.peers.size()));
  }
  send(result);
}

void VirtualAgent::heartbeat(Clock::time_point now) {
  if (!welcomed_) return;
  HeartbeatMsg beat;
  for (const auto& [attempt, run] : running_) {
    const Millis elapsed = since(run.launched, now);
    AttemptReport report{attempt, run.job, run.behaviour.step_at(elapsed), std::nullopt, "forward", std::nullopt, 0};
    if (auto progress = run.behaviour.progress_at(elapsed)) {
      report.last_progress_at = run.launched_wall + *progress;
      report.first_step_at = run.launched_wall + kStepPeriod;
    }
    beat.attempts.push_back(report);
  }
  ++counters_.heartbeats;
  send(beat);
}

void VirtualAgent::advance(Clock::time_point now) {
  for (auto it = running_.begin(); it != running_.end();) {
    const auto exits_after = it->second.behaviour.exits_after();
    if (!exits_after || since(it->second.launched, now) < *exits_after) {
      ++it;
      continue;
    }
    const AttemptExitedMsg exit = it->second.behaviour.exit_report(it->first);
    ++(exit.exit_code == 0 ? counters_.exits_succeeded : counters_.exits_failed);
    it = running_.erase(it);
    send(exit);
  }
}

}  // namespace trainyard::fleet
