#include "agent/simulated_run.h"

#include <sys/socket.h>

#include <algorithm>
#include <utility>
#include <spdlog/spdlog.h>

#include "agent/rank_channel.h"
#include "agent/simulated_rank_process.h"
#include "proto/faults.h"
#include "proto/workload_memory.h"

namespace trainyard::agent {
namespace {

// How often a claim waiting on the data plane looks whether the rank has ended.
constexpr std::chrono::milliseconds kClaimSlice{200};

// What the rank's process may use: the job's memory_mb when it set one, else what the spec needs
// and room for the process itself (its code, threads and the message buffers).
RankProcessPlan rank_plan(const LaunchMsg& launch, int channel_fd) {
  RankProcessPlan plan;
  plan.argv = {"/proc/self/exe", kSimulatedRankFlag};
  plan.environments = {{{"PATH", "/usr/bin:/bin"}}};
  plan.channel_fd = channel_fd;
  if (launch.memory_mb > 0) {
    plan.memory_limit_mb = launch.memory_mb;
  } else {
    plan.memory_limit_mb = simulated_rank_memory_mb(launch.workload, launch.world_size);
    plan.memory_limit_origin = "the simulated spec's memory estimate";
  }
  return plan;
}

// A field the reader has already bounded to an int's range.
std::optional<int> small(std::optional<std::int64_t> value) {
  if (!value) return std::nullopt;
  return static_cast<int>(*value);
}

}  // namespace

SimulatedRun::SimulatedRun(const LaunchMsg& launch, const std::string& attempt_dir, SimulatedRunContext context,
                           ExitCallback on_exit)
    : launch_(launch), data_plane_(context.data_plane), on_exit_(std::move(on_exit)) {
  progress_.attempt_id = launch_.attempt_id;
  progress_.job_id = launch_.job_id;
  auto [agent_end, rank_end] = make_rank_channel();
  channel_ = std::move(agent_end);
  process_ = std::make_unique<RankProcess>(launch_, attempt_dir, std::move(context.account), context.cgroups,
                                           context.processes, context.io, rank_plan(launch_, rank_end.fd()),
                                           [this](ProcessEnd end) { finish(end); });
  rank_end.close();  // the rank holds it now; its exit ends the relay's stream
  const Json start = {{"start",
                       {{"launch", encode(DaemonMessage(launch_))},
                        {"core", context.core},
                        {"cores", context.device.core_count()},
                        {"seed", static_cast<std::int64_t>(context.device.seed() & INT64_MAX)},
                        {"faults", fault_specs(context.device.faults())},
                        {"collective_timeout_ms", context.collective_timeout.count()}}}};
  send_channel_message(channel_.fd(), start);  // a rank that never started has closed its end: nothing to tell
  relay_ = std::thread([this] { relay(); });
}

SimulatedRun::~SimulatedRun() {
  stop_relay();
  process_.reset();
  if (relay_.joinable()) relay_.join();
}

void SimulatedRun::stop_relay() {
  ending_ = true;
  ::shutdown(channel_.fd(), SHUT_RDWR);
}

void SimulatedRun::relay() {
  for (;;) {
    try {
      auto message = receive_channel_message(channel_.fd());
      if (!message) return;
      keep(message->body);
    } catch (const std::exception& e) {
      spdlog::warn("event=rank_message_refused job={} attempt={} rank={} error=\"{}\"", launch_.job_id,
                   launch_.attempt_id, launch_.rank, e.what());
    }
  }
}

void SimulatedRun::keep(const Json& message) {
  if (message.contains("claim")) return serve_claim(message["claim"]);
  std::lock_guard lock(mutex_);
  if (message.contains("progress")) {
    ObjectReader r(message["progress"], "progress");
    progress_.step = std::max(progress_.step, r.integer("step", 0, INT64_MAX));
    if (const auto at = r.integer("at_ms", 0, INT64_MAX)) progress_.last_progress_at = from_unix_ms(at);
    if (const auto first = r.integer("first_step_ms", 0, INT64_MAX)) progress_.first_step_at = from_unix_ms(first);
    if (auto phase = r.opt_string("phase", 1, 32)) progress_.phase = std::move(*phase);
    if (auto ms = r.opt_integer("checkpoint_ms", 0, INT64_MAX)) progress_.checkpoint_ms = *ms;
    if (auto ms = r.opt_integer("busy_ms", 0, INT64_MAX)) progress_.busy_ms = *ms;
    if (const Json* failed = r.child("checkpoint_failures")) {
      progress_.checkpoint_failures = parse_checkpoint_failures(*failed, r.field_path("checkpoint_failures"));
    }
    r.finish();
  } else if (message.contains("metrics")) {
    if (!message["metrics"].is_string()) throw InvalidInput("metrics", "must be an encoded metrics message");
    auto parsed = parse_agent_message(message["metrics"].get<std::string>());
    auto* metrics = std::get_if<MetricsMsg>(&parsed);
    if (!metrics) throw InvalidInput("metrics", "must be an encoded metrics message");
    metrics_.insert(metrics_.end(), metrics->steps.begin(), metrics->steps.end());
    checkpoints_.insert(checkpoints_.end(), metrics->checkpoints.begin(), metrics->checkpoints.end());
  } else if (message.contains("exit")) {
    ObjectReader r(message["exit"], "exit");
    AttemptExit exit;
    exit.exit_code = small(r.opt_integer("exit_code", 0, 255));
    exit.signal = small(r.opt_integer("signal", 1, 64));
    exit.reason = r.string("reason", 1, 4096);
    exit.steps = r.integer("steps", 0, INT64_MAX);
    exit.peer_closed_rank = small(r.opt_integer("peer_closed_rank", 0, launch_.world_size - 1));
    r.finish();
    reported_exit_ = std::move(exit);
  } else {
    throw InvalidInput("channel message", "unknown kind " + message.begin().key());
  }
}

void SimulatedRun::serve_claim(const Json& claim) {
  ObjectReader r(claim, "claim");
  const std::int64_t id = r.integer("id", 1, INT64_MAX);
  // Only this attempt's connections, and only those meant for this rank: the rank's process runs as
  // the job's account and is not trusted with more.
  const neuron::DataPlaneHello hello{launch_.attempt_id, static_cast<int>(r.integer("from_rank", 0, launch_.world_size - 1)),
                                     static_cast<int>(r.integer("to_rank", launch_.rank, launch_.rank)),
                                     static_cast<int>(r.integer("channel", 0, neuron::kMaxChannel))};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(r.integer("timeout_ms", 0, 86'400'000));
  r.finish();
  std::optional<neuron::Socket> connection;
  while (!connection && !ending_ && std::chrono::steady_clock::now() < deadline) {
    const auto slice_end = std::min(deadline, std::chrono::steady_clock::now() + kClaimSlice);
    connection = data_plane_.claim(hello, launch_.data_plane_secret, slice_end);
  }
  send_channel_message(channel_.fd(), {{"claimed", {{"id", id}}}}, connection ? connection->fd() : -1);
}

void SimulatedRun::finish(const ProcessEnd& end) {
  // The rank has exited: the relay gives up any claim and reads what the rank sent to the end of
  // the stream.
  ending_ = true;
  if (relay_.joinable()) relay_.join();
  AttemptExit exit;
  {
    std::lock_guard lock(mutex_);
    if (reported_exit_) {
      exit = *reported_exit_;
      ProcessEnd seen = end;
      if (exit.exit_code == 0) seen.stop_reason.clear();  // it completed before the stop reached it
      exit.reason = seen.reason(exit.reason);
    } else {
      exit.exit_code = end.exit_code;
      exit.signal = end.signal;
      exit.reason = end.reason(end.status);
      exit.steps = progress_.step;
    }
  }
  exit.log_tail = read_exit_tail(process_->log_path());
  on_exit_(std::move(exit));
}

void SimulatedRun::faults_changed(const FaultPlan& faults) {
  // Never waits on the rank: one whose queue is full misses the change, and says so in the log.
  if (!send_channel_message(channel_.fd(), {{"faults", fault_specs(faults)}}, -1, true)) {
    spdlog::warn("event=faults_not_passed_on job={} attempt={} rank={}", launch_.job_id, launch_.attempt_id, launch_.rank);
  }
}

std::vector<StepMetric> SimulatedRun::take_metrics() {
  std::lock_guard lock(mutex_);
  return std::exchange(metrics_, {});
}

std::vector<CheckpointReport> SimulatedRun::take_checkpoints() {
  std::lock_guard lock(mutex_);
  return std::exchange(checkpoints_, {});
}

AttemptReport SimulatedRun::report() {
  std::lock_guard lock(mutex_);
  return progress_;
}

}  // namespace trainyard::agent
