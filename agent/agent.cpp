#include "agent/agent.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "agent/disk_space.h"
#include "agent/job_disk_floor.h"
#include "agent/launch_paths.h"
#include "agent/node_credential.h"
#include "proto/version.h"

namespace trainyard::agent {
namespace {
constexpr std::size_t kRecentExits = 256;
constexpr std::size_t kUnsentMetricBatches = 1024;  // bounded: a long partition loses the oldest
}  // namespace

Agent::Agent(boost::asio::io_context& io, AgentConfig config, neuron::NeuronDevice& device, AgentDeps deps)
    : io_(io),
      config_(std::move(config)),
      device_(device),
      deps_(deps),
      node_credential_(load_node_credential(node_credential_path(config_.work_dir))),
      failover_(config_.servers),
      backoff_({config_.reconnect_min, config_.reconnect_max, config_.reconnect_jitter}),
      heartbeat_timer_(deps_.timers.make()),
      reconnect_timer_(deps_.timers.make()),
      answer_timer_(deps_.timers.make()) {}

Agent::~Agent() = default;

void Agent::start() { connect(); }

void Agent::connect() {
  if (stopping_) return;
  welcomed_ = false;
  net::WebSocketClientHandlers handlers;
  handlers.on_open = [this] { on_open(); };
  handlers.on_message = [this](std::string text) { on_message(text); };
  handlers.on_closed = [this](const std::string& reason) { on_closed(reason); };
  // Once the node has its own credential, the join token no longer admits it.
  const std::string& token = node_credential_.empty() ? config_.join_token : node_credential_;
  link_ = deps_.links.connect(failover_.current(), token, std::move(handlers));
  expect_answer(answer_deadline() / 2);
}

std::chrono::milliseconds Agent::answer_deadline() const {
  if (fence_after_.count() == 0) return std::max(3 * heartbeat_interval_, std::chrono::milliseconds(5000));
  return std::max(fence_after_ / 2, heartbeat_interval_ * 3 / 2);
}

// A timer that fired while the agent itself was stalled may run before the answer that arrived
// meanwhile is read: so a miss is confirmed by a second, short wait, which runs only after what was
// already queued, and any answer (a newer generation) voids both. The generation, not cancel(), is
// what voids them: a steady timer's handler that already fell due still runs after a cancel.
void Agent::expect_answer(std::chrono::milliseconds within) {
  const std::uint64_t generation = ++answer_generation_;
  answer_timer_->start(within, [this, within, generation] {
    if (generation != answer_generation_) return;
    const auto again = std::min(heartbeat_interval_, within / 4);
    answer_timer_->start(again, [this, generation, waited = within + again] {
      if (generation == answer_generation_) unanswered(waited);
    });
  });
}

void Agent::unanswered(std::chrono::milliseconds waited) {
  if (!link_) return;
  spdlog::warn("event=daemon_unanswering node={} server={} waited_ms={} welcomed={} running={}", config_.name,
               failover_.current(), waited.count(), welcomed_, runs_.size());
  link_->abort("the daemon answered nothing for " + std::to_string(waited.count()) + " ms");
}

void Agent::send(const AgentMessage& message) {
  if (link_) link_->send(encode(message));
}

void Agent::on_open() {
  HelloMsg hello;
  hello.agent_version = version_with_commit();
  hello.name = config_.name;
  hello.cores = config_.cores;
  hello.memory_mb = config_.memory_mb;
  hello.labels = config_.labels;
  hello.data_addr = config_.data_addr;
  hello.faults = fault_specs(device_.faults());
  hello.cgroups = config_.cgroups;
  hello.job_network = config_.job_network;
  for (auto& [id, running] : runs_) hello.attempts.push_back(running.run->report());
  // The welcome acknowledges the hello as an ack does a heartbeat.
  hello_seq_ = next_heartbeat_seq();
  send(hello);
}

std::int64_t Agent::next_heartbeat_seq() {
  const std::int64_t seq = ++heartbeat_seq_;
  if (fence_after_.count() == 0) return seq;
  FenceDeadline& deadline = fence_deadlines_[seq];
  deadline.sent_at = std::chrono::steady_clock::now();
  deadline.timer = deps_.timers.make();
  deadline.timer->start(fence_after_, [this, seq] { fence(seq); });
  return seq;
}

void Agent::acknowledged(std::int64_t seq) {
  if (seq <= acked_seq_) return;
  acked_seq_ = seq;
  // Older deadlines are superseded: this one is the node's deadline now.
  while (!fence_deadlines_.empty() && fence_deadlines_.begin()->first < seq) {
    fence_deadlines_.begin()->second.timer->cancel();
    fence_deadlines_.erase(fence_deadlines_.begin());
  }
  update_fence_keeper();
}

void Agent::update_fence_keeper() {
  if (!deps_.keeper) return;
  tell_keeper_what_runs();
  const auto acked = fence_deadlines_.find(acked_seq_);
  if (fence_after_.count() == 0 || runs_.empty() || acked == fence_deadlines_.end()) {
    if (!keeper_clear_) deps_.keeper->clear();
    keeper_clear_ = true;
    return;
  }
  deps_.keeper->keep_until(acked->second.sent_at + fence_after_ + fence_after_ / 20);
  keeper_clear_ = false;
}

void Agent::tell_keeper_what_runs() {
  std::vector<AttemptId> attempts;
  // The grace the agent's own fence gives each attempt (below): the longest of them.
  std::chrono::milliseconds grace{0};
  for (const auto& [id, running] : runs_) {
    attempts.push_back(id);
    grace = std::max(grace, std::chrono::milliseconds(running.launch.preempt_grace_ms));
  }
  if (attempts == keeper_attempts_) return;  // an ack changes only the deadline
  keeper_attempts_ = attempts;
  deps_.keeper->running(attempts, grace);
}

void Agent::fence(std::int64_t seq) {
  const bool newest_acked = seq == acked_seq_;
  // A heartbeat never acknowledged has no say; one an ack superseded was cancelled.
  if (!newest_acked) {
    fence_deadlines_.erase(seq);
    return;
  }
  if (runs_.empty()) return;
  const std::string reason = "fenced: the daemon acknowledged no heartbeat of this node for " +
                             std::to_string(fence_after_.count()) + " ms; its attempts stopped before the daemon could "
                             "replace them";
  spdlog::warn("event=fenced node={} attempts={} fence_ms={} last_acked_seq={}", config_.name, runs_.size(),
               fence_after_.count(), seq);
  std::vector<KillMsg> kills;
  for (const auto& [id, running] : runs_) kills.push_back(KillMsg{id, reason, running.launch.preempt_grace_ms, false});
  for (const auto& k : kills) kill(k);
}

void Agent::on_message(const std::string& text) {
  DaemonMessage message;
  try {
    message = parse_daemon_message(text);
  } catch (const InvalidInput& e) {
    spdlog::warn("event=bad_daemon_message node={} error=\"{}\"", config_.name, e.what());
    return;
  }
  // One message must never take the agent, and every job on the node, down with it.
  try {
    std::visit(
        [this](const auto& m) {
          using T = std::decay_t<decltype(m)>;
          if constexpr (std::is_same_v<T, WelcomeMsg>) {
            if (!m.node_credential.empty()) keep_node_credential(m.node_credential);
            welcomed_ = true;
            failover_.answered();
            backoff_.after_success();
            heartbeat_interval_ = std::chrono::milliseconds(m.heartbeat_interval_ms);
            cluster_ = m.cluster;
            const bool learned_fence = fence_after_.count() == 0 && m.fence_after_ms > 0;
            fence_after_ = std::chrono::milliseconds(m.fence_after_ms);
            // The first welcome teaches the fence time after the hello was sent: its deadline starts now.
            if (learned_fence) hello_seq_ = next_heartbeat_seq();
            acknowledged(hello_seq_);
            expect_answer(answer_deadline());
            spdlog::info("event=registered node={} daemon_version={} heartbeat_ms={} running={}", config_.name,
                         m.daemon_version, m.heartbeat_interval_ms, runs_.size());
            for (const auto& metrics : unsent_metrics_) send(metrics);
            unsent_metrics_.clear();
            for (const auto& exit : recent_exits_) send(exit);
            schedule_heartbeat();
          } else if constexpr (std::is_same_v<T, HeartbeatAckMsg>) {
            acknowledged(m.seq);
            expect_answer(answer_deadline());  // even a late ack shows the daemon is answering
          } else if constexpr (std::is_same_v<T, RefusedMsg>) {
            fatal_error_ = "the daemon refused this agent: " + m.reason;
            spdlog::error("event=refused node={} reason=\"{}\"", config_.name, m.reason);
          } else if constexpr (std::is_same_v<T, LaunchMsg>) {
            launch(m);
          } else if constexpr (std::is_same_v<T, KillMsg>) {
            kill(m);
          } else if constexpr (std::is_same_v<T, LogRequestMsg>) {
            send_log(m);
          } else if constexpr (std::is_same_v<T, SetFaultsMsg>) {
            set_faults(m);
          } else if constexpr (std::is_same_v<T, HealthCheckMsg>) {
            run_health_check(m);
          }
        },
        message);
  } catch (const std::exception& e) {
    spdlog::error("event=daemon_message_failed node={} error=\"{}\"", config_.name, e.what());
  }
}

void Agent::on_closed(const std::string& reason) {
  link_.reset();
  welcomed_ = false;
  heartbeat_timer_->cancel();
  ++answer_generation_;
  if (stopping_) return;
  if (reason.find("client_certificate_refused") != std::string::npos) {
    fatal_error_ = "the daemon refused this agent's TLS client certificate (--tls-cert): " + reason;
  } else if (reason.rfind("HTTP 401", 0) == 0 || reason.rfind("HTTP 403", 0) == 0) {
    fatal_error_ = node_credential_.empty()
                       ? "the daemon refused the join token: " + reason
                       : "the daemon refused this node's credential (" + node_credential_path(config_.work_dir) +
                             "): " + reason + "; if the daemon lost it, delete that file and have an admin forget the "
                             "node's credential";
  }
  if (!fatal_error_.empty()) {
    spdlog::error("event=agent_stopping node={} reason=\"{}\"", config_.name, fatal_error_);
    shutdown(std::chrono::milliseconds(0));
    return;
  }
  const std::string lost = failover_.current();
  const net::FailoverStep step = failover_.failed(net::outcome_of_link_close(reason));
  if (step.kind == net::FailoverStep::Kind::refused) {
    spdlog::error("event=redirect_refused node={} reason=\"{}\"", config_.name, step.message);
  }
  // A daemon that refused the connection for a cap says when to come back; the backoff still grows.
  const std::chrono::milliseconds retry_in = std::max<std::chrono::milliseconds>(
      backoff_.after_failure(), net::retry_after_of_link_close(reason).value_or(std::chrono::seconds(0)));
  spdlog::warn("event=link_down node={} server={} reason=\"{}\" next_server={} retry_in_ms={} running={}", config_.name,
               lost, reason, failover_.current(), retry_in.count(), runs_.size());
  reconnect_timer_->start(retry_in, [this] { connect(); });
}

void Agent::keep_node_credential(const std::string& secret) {
  node_credential_ = secret;
  const std::string path = node_credential_path(config_.work_dir);
  try {
    save_node_credential(path, secret);
    spdlog::info("event=node_credential_saved node={} path={}", config_.name, path);
  } catch (const std::exception& e) {
    // This life can still reconnect with it; a restart cannot, and will be refused.
    spdlog::error("event=node_credential_not_saved node={} path={} error=\"{}\"", config_.name, path, e.what());
  }
}

void Agent::schedule_heartbeat() {
  heartbeat_timer_->start(heartbeat_interval_, [this] {
    if (!welcomed_) return;
    HeartbeatMsg hb;
    hb.seq = next_heartbeat_seq();
    for (auto& [id, running] : runs_) {
      hb.attempts.push_back(running.run->report());
      hb.attempts.back().log_bytes = log_bytes_in(log_dir_of(id));
      hb.attempts.back().work_bytes = work_bytes_in(log_dir_of(id));
    }
    hb.disks = measure_disks(config_.work_dir, config_.checkpoint_root);
    send(hb);
    keep_job_disk_floor(hb);
    for (auto& [id, running] : runs_) send_metrics(id, *running.run);
    schedule_heartbeat();
  });
}

int Agent::take_core(int wanted) {
  const int count = device_.core_count();
  for (int i = 0; i < count; ++i) {
    const int core = (wanted + i) % count;
    if (!busy_cores_.contains(core)) {
      busy_cores_.insert(core);
      return core;
    }
  }
  return wanted % count;  // more ranks than cores: share (the daemon does not oversubscribe)
}

void Agent::launch(const LaunchMsg& launch) {
  if (runs_.contains(launch.attempt_id)) return;  // a duplicate launch after a reconnect
  std::string dir;
  try {
    dir = attempt_dir(config_.work_dir, cluster_, launch.attempt_id).string();
  } catch (const InvalidInput& e) {
    // Something planted in the attempt's place is the node's problem (daemon/base/failure_rules.cpp).
    return refuse_launch(launch, std::string("node files: ") + e.what());
  }
  try {
    check_checkpoint_paths(launch, config_.checkpoint_root);
  } catch (const InvalidInput& e) {
    return refuse_launch(launch, e.what());
  }
  const AttemptId id = launch.attempt_id;
  auto on_exit = [this, id](AttemptExit exit) { run_exited(id, std::move(exit)); };
  Running running;
  running.launch = launch;
  running.dir = dir;
  spdlog::info("event=attempt_launch node={} job={} attempt={} rank={} world_size={} kind={} network={}", config_.name,
               launch.job_id, id, launch.rank, launch.world_size, to_string(launch.kind),
               launch.job_network ? ipv4_text(launch.job_network->addresses[static_cast<std::size_t>(launch.rank)]) : "node's");
  if (launch.kind == JobKind::simulated) running.core = take_core(0);
  try {
    running.run = deps_.workloads.start_run(launch, cluster_, dir, running.core, on_exit);
  } catch (const InvalidInput& e) {
    if (launch.kind == JobKind::simulated) busy_cores_.erase(running.core);
    return refuse_launch(launch, e.what());
  }
  // What its job's checkpoint directory held before it ran (earlier attempts' checkpoints, the
  // daemon's claim for a retry) is not this attempt's writing: the disk floor judges what it adds.
  if (!launch.checkpoint_dir.empty()) {
    if (const auto device = device_of(launch.checkpoint_dir)) {
      running.bytes_at_last_heartbeat[*device] = tree_bytes_in(launch.checkpoint_dir);
    }
  }
  AttemptStartedMsg started{id, running.run->environment()};
  runs_.emplace(id, std::move(running));
  update_fence_keeper();
  send(started);
}

// The daemon sees the refusal as the rank exiting at once; it never ran, so there is nothing else to undo.
void Agent::refuse_launch(const LaunchMsg& launch, const std::string& reason) {
  spdlog::warn("event=attempt_launch_refused node={} job={} attempt={} reason=\"{}\"", config_.name, launch.job_id,
               launch.attempt_id, reason);
  AttemptExitedMsg msg{launch.attempt_id, 127, std::nullopt, "launch refused: " + reason, 0, ""};
  recent_exits_.push_back(msg);
  if (recent_exits_.size() > kRecentExits) recent_exits_.pop_front();
  send(msg);
}

void Agent::kill(const KillMsg& kill) {
  auto it = runs_.find(kill.attempt_id);
  if (it == runs_.end()) return;
  spdlog::info("event=attempt_kill node={} attempt={} grace_ms={} reason=\"{}\"", config_.name, kill.attempt_id,
               kill.grace_ms, kill.reason);
  const auto grace = std::chrono::milliseconds(kill.grace_ms);
  if (!kill.checkpoint) {
    it->second.run->terminate(kill.reason);
    deps_.timers.after(grace, [this, id = kill.attempt_id] {
      auto run = runs_.find(id);
      if (run != runs_.end()) run->second.run->kill();
    });
    return;
  }
  // Saving the work gets the grace; then the usual stop: terminate, and kill after another grace.
  it->second.run->save_then_stop(kill.reason);
  deps_.timers.after(grace, [this, grace, id = kill.attempt_id, reason = kill.reason] {
    auto run = runs_.find(id);
    if (run == runs_.end()) return;
    run->second.run->terminate(reason);
    deps_.timers.after(grace, [this, id] {
      auto again = runs_.find(id);
      if (again != runs_.end()) again->second.run->kill();
    });
  });
}

std::vector<FilesystemWrites> Agent::job_writes(const std::map<AttemptId, std::int64_t>& work_bytes, bool remember) {
  // Bytes per filesystem and attempt: an attempt whose checkpoint directory is on its work
  // filesystem writes there twice over.
  std::map<dev_t, std::string> roles;
  std::map<dev_t, std::int64_t> free_mb;
  std::map<std::pair<dev_t, AttemptId>, std::int64_t> bytes;
  const auto add = [&](AttemptId id, const std::string& role, const std::filesystem::path& path, std::int64_t written) {
    const auto device = device_of(path);
    const auto disk = measure_disk(role, path);
    if (!device || !disk) return;
    roles.try_emplace(*device, role);
    free_mb[*device] = disk->free_mb;
    bytes[{*device, id}] += written;
  };
  for (const auto& [id, work] : work_bytes) {
    const auto run = runs_.find(id);
    if (run == runs_.end()) continue;
    add(id, "work", config_.work_dir, work);
    const std::string& checkpoints = run->second.launch.checkpoint_dir;
    if (!checkpoints.empty()) add(id, "checkpoint", checkpoints, tree_bytes_in(checkpoints));
  }
  std::map<dev_t, FilesystemWrites> filesystems;
  for (const auto& [key, now] : bytes) {
    const auto& [device, id] = key;
    Running& running = runs_.at(id);
    FilesystemWrites& filesystem = filesystems.try_emplace(device, FilesystemWrites{roles[device], free_mb[device], {}}).first->second;
    std::int64_t& before = running.bytes_at_last_heartbeat[device];
    if (!running.stopped_for_disk_floor) filesystem.writes.push_back({id, now, before});
    if (remember) before = now;
  }
  std::vector<FilesystemWrites> list;
  for (auto& [device, filesystem] : filesystems) list.push_back(std::move(filesystem));
  return list;
}

void Agent::keep_job_disk_floor(const HeartbeatMsg& hb) {
  std::map<AttemptId, std::int64_t> work_bytes;
  for (const AttemptReport& report : hb.attempts) work_bytes[report.attempt_id] = report.log_bytes + report.work_bytes;
  for (const DiskFloorStop& stop : attempts_to_stop_for_disk_floor(job_writes(work_bytes, true), config_.job_disk_floor_mb)) {
    Running& running = runs_.at(stop.attempt);
    spdlog::warn("event=job_disk_floor_reached node={} job={} attempt={} floor_mb={} reason=\"{}\"", config_.name,
                 running.launch.job_id, stop.attempt, config_.job_disk_floor_mb, stop.reason);
    running.stopped_for_disk_floor = true;
    kill(KillMsg{stop.attempt, stop.reason, running.launch.preempt_grace_ms, false});
  }
}

std::optional<std::string> Agent::disk_floor_reason_at_exit(AttemptId id) {
  std::map<AttemptId, std::int64_t> work_bytes;
  for (const auto& [other, running] : runs_) {
    const auto dir = log_dir_of(other);
    work_bytes[other] = dir.empty() ? 0 : log_bytes_in(dir) + work_bytes_in(dir);
  }
  for (const DiskFloorStop& stop : attempts_to_stop_for_disk_floor(job_writes(work_bytes, false), config_.job_disk_floor_mb)) {
    if (stop.attempt == id) return stop.reason;
  }
  return std::nullopt;
}

void Agent::send_log(const LogRequestMsg& request) {
  LogReplyMsg reply;
  reply.request_id = request.request_id;
  reply.attempt_id = request.attempt_id;
  // The rank is part of the file name; an agent holds at most one rank of an attempt.
  std::error_code ec;
  bool found = false;
  for (const auto& entry : std::filesystem::directory_iterator(log_dir_of(request.attempt_id), ec)) {
    if (entry.path().extension() == ".log") {
      LogTail tail = read_log_tail(entry.path().string(), request.max_bytes, request.tail_lines);
      if (!tail.readable) break;
      reply.text = std::move(tail.text);
      reply.log_bytes = tail.log_bytes;
      reply.truncated = tail.truncated;
      found = true;
      break;
    }
  }
  if (!found) reply.error = "no log for attempt " + std::to_string(request.attempt_id) + " on " + config_.name;
  send(reply);
}

// Empty (no logs) when a symlink was planted in the attempt's place: its target is not this attempt's.
std::filesystem::path Agent::log_dir_of(AttemptId id) const {
  if (const auto run = runs_.find(id); run != runs_.end()) return run->second.dir;
  try {
    return attempt_dir(config_.work_dir, cluster_, id);
  } catch (const InvalidInput& e) {
    spdlog::warn("event=attempt_log_refused node={} attempt={} reason=\"{}\"", config_.name, id, e.what());
    return {};
  }
}

void Agent::run_exited(AttemptId id, AttemptExit exit) {
  auto it = runs_.find(id);
  if (it == runs_.end()) return;
  // Read its progress one last time before its last steps go, so lines written after the last
  // heartbeat are sent too, and before the exit that ends the attempt.
  const AttemptReport last = it->second.run->report();
  send_metrics(id, *it->second.run);
  // A job that filled a filesystem between two heartbeats failed on its own ENOSPC: still its own
  // doing, not the node's disk to retry elsewhere.
  const bool failed = exit.exit_code.value_or(0) != 0 || exit.signal;
  if (failed && !it->second.stopped_for_disk_floor) {
    if (const auto floor = disk_floor_reason_at_exit(id)) exit.reason = *floor + " (" + exit.reason + ")";
  }
  AttemptExitedMsg msg{id, exit.exit_code, exit.signal, exit.reason, exit.steps, exit.log_tail};
  msg.first_step_at = last.first_step_at;
  msg.checkpoint_ms = last.checkpoint_ms;
  msg.checkpoint_failures = last.checkpoint_failures;
  msg.user_facts = std::move(exit.user_facts);
  msg.user_facts_error = std::move(exit.user_facts_error);
  msg.peer_closed_rank = exit.peer_closed_rank;
  spdlog::info("event=attempt_exited node={} job={} attempt={} exit_code={} signal={} reason=\"{}\"", config_.name,
               it->second.launch.job_id, id, exit.exit_code.value_or(-1), exit.signal.value_or(0), exit.reason);
  busy_cores_.erase(it->second.core);
  // The run finished inside its own callback chain: destroy it on a fresh turn of the loop.
  auto finished = std::make_shared<Running>(std::move(it->second));
  runs_.erase(it);
  update_fence_keeper();
  boost::asio::post(io_, [finished] {});
  recent_exits_.push_back(msg);
  if (recent_exits_.size() > kRecentExits) recent_exits_.pop_front();
  if (welcomed_) send(msg);
}

void Agent::send_metrics(AttemptId id, AttemptRun& run) {
  MetricsMsg msg{id, run.take_metrics(), run.take_checkpoints()};
  if (msg.steps.empty() && msg.checkpoints.empty()) return;
  if (welcomed_) {
    send(msg);
  } else {
    unsent_metrics_.push_back(std::move(msg));
    if (unsent_metrics_.size() > kUnsentMetricBatches) unsent_metrics_.pop_front();
  }
}

void Agent::set_faults(const SetFaultsMsg& msg) {
  FaultPlan plan;
  try {
    for (const auto& spec : msg.faults) apply_fault_spec(plan, spec, device_.core_count());
    device_.set_faults(plan);
    for (auto& [id, running] : runs_) running.run->faults_changed(plan);
    spdlog::info("event=faults_applied node={} faults={}", config_.name, msg.faults.size());
  } catch (const InvalidInput& e) {
    // The daemon validated them against our core count; keep the faults we have and say so.
    spdlog::warn("event=bad_faults node={} error=\"{}\"", config_.name, e.what());
  }
  send(FaultsMsg{fault_specs(device_.faults())});
}

void Agent::run_health_check(const HealthCheckMsg& msg) {
  if (health_tasks_.contains(msg.task_id)) return;
  const bool simulated_busy = std::any_of(runs_.begin(), runs_.end(), [](const auto& kv) {
    return kv.second.launch.kind == JobKind::simulated;
  });
  if (msg.suite == HealthSuite::accelerator && simulated_busy) {
    // The suite needs every core to itself; the daemon only asks idle nodes, so this is a race.
    send(HealthResultMsg{msg.task_id, nullptr, std::string(kNodeBusyForHealthCheck)});
    return;
  }
  spdlog::info("event=health_check node={} task={} suite={} rank={} peers={}", config_.name, msg.task_id,
               to_string(msg.suite), msg.rank, msg.peers.size());
  const std::int64_t id = msg.task_id;
  auto done = [this, id](HealthResultMsg result) {
    send(result);
    // Finished inside its own completion: destroy (join) it on a fresh turn of the loop.
    auto it = health_tasks_.find(id);
    if (it == health_tasks_.end()) return;
    std::shared_ptr<HealthTask> finished(std::move(it->second));
    health_tasks_.erase(it);
    boost::asio::post(io_, [finished] {});
  };
  health_tasks_.emplace(id, deps_.workloads.start_health_check(msg, done));
}

void Agent::shutdown(std::chrono::milliseconds grace) {
  stopping_ = true;
  reconnect_timer_->cancel();
  heartbeat_timer_->cancel();
  ++answer_generation_;
  for (auto& [id, running] : runs_) running.run->terminate("agent shutting down");
  if (link_) link_->close("agent shutting down");
  if (runs_.empty()) {
    io_.stop();
    return;
  }
  deps_.timers.after(grace, [this] {
    for (auto& [id, running] : runs_) running.run->kill();
    io_.stop();
  });
}

}  // namespace trainyard::agent
