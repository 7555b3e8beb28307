#include "agent/simulated_rank_process.h"

#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "agent/rank_channel.h"
#include "checkpoint/checkpoint.h"
#include "neuron/data_plane.h"
#include "neuron/device.h"
#include "neuron/tcp_communicator.h"
#include "neuron/trainer.h"
#include "proto/errors.h"
#include "proto/faults.h"
#include "proto/messages.h"
#include "proto/text.h"
#include "proto/time.h"

namespace trainyard::agent {
namespace {

void log_line(const std::string& line) {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  std::cout << line << '\n' << std::flush;
}

// What the agent asked for in its start message.
struct RankStart {
  LaunchMsg launch;
  int core = 0;
  int cores = 1;
  std::uint64_t seed = 0;
  FaultPlan faults;
  std::chrono::milliseconds collective_timeout{30000};
};

FaultPlan parse_faults(const Json& specs, int cores) {
  if (!specs.is_array()) throw InvalidInput("faults", "must be an array of fault specs");
  FaultPlan plan;
  for (const auto& spec : specs) {
    if (!spec.is_string()) throw InvalidInput("faults", "must be an array of fault specs");
    apply_fault_spec(plan, spec.get<std::string>(), cores);
  }
  return plan;
}

RankStart parse_start(const Json& body) {
  ObjectReader r(body, "start");
  RankStart start;
  auto message = parse_daemon_message(r.string("launch", 1, kMaxChannelMessageBytes));
  if (!std::holds_alternative<LaunchMsg>(message)) throw InvalidInput("start.launch", "must be a launch message");
  start.launch = std::get<LaunchMsg>(std::move(message));
  start.cores = static_cast<int>(r.integer("cores", 1, 4096));
  start.core = static_cast<int>(r.integer("core", 0, start.cores - 1));
  start.seed = static_cast<std::uint64_t>(r.integer("seed", 0, INT64_MAX));
  start.collective_timeout = std::chrono::milliseconds(r.integer("collective_timeout_ms", 1, 86'400'000));
  if (!body.contains("faults")) throw InvalidInput("start.faults", "is required");
  start.faults = parse_faults(body["faults"], start.cores);
  return start;
}

// The agent's side of the data plane as seen from this process: claims go over the channel and
// the connection comes back with the answer. The channel's other messages (fault changes) are
// read by the same thread; its end (the agent gone) stops training.
class AgentChannel final : public neuron::DataPlaneClaims {
 public:
  AgentChannel(int fd, neuron::NeuronDevice& device, std::stop_source stop)
      : fd_(fd), device_(device), stop_(std::move(stop)), reader_([this] { read(); }) {}
  ~AgentChannel() override {
    ::shutdown(fd_, SHUT_RD);  // ends the reader's wait
    reader_.join();
  }

  bool send(const Json& message) {
    std::lock_guard lock(send_mutex_);
    return send_channel_message(fd_, message);
  }

  std::optional<neuron::Socket> claim(const neuron::DataPlaneHello& hello, std::string_view,
                                      neuron::SteadyTime deadline) override {
    std::unique_lock lock(mutex_);
    const std::int64_t id = next_claim_++;
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    lock.unlock();
    // The attempt and its secret are the agent's to add: this process can only claim for its own.
    send({{"claim",
           {{"id", id}, {"from_rank", hello.from_rank}, {"to_rank", hello.to_rank}, {"channel", hello.channel},
            {"timeout_ms", std::max<std::int64_t>(0, wait.count())}}}});
    lock.lock();
    // The agent answers by the deadline; a little later still counts, never a lost connection.
    answered_.wait_until(lock, deadline + std::chrono::seconds(1), [&] { return closed_ || answers_.contains(id); });
    const auto it = answers_.find(id);
    if (it == answers_.end()) return std::nullopt;
    std::optional<neuron::Socket> socket = std::move(it->second);
    answers_.erase(it);
    return socket;
  }

 private:
  void read() {
    try {
      while (auto message = receive_channel_message(fd_)) {
        if (message->body.contains("claimed")) {
          ObjectReader r(message->body["claimed"], "claimed");
          const std::int64_t id = r.integer("id", 1, INT64_MAX);
          std::lock_guard lock(mutex_);
          answers_[id] = message->passed.valid() ? std::optional(std::move(message->passed)) : std::nullopt;
          answered_.notify_all();
        } else if (message->body.contains("faults")) {
          device_.set_faults(parse_faults(message->body["faults"], device_.core_count()));
        }
      }
    } catch (const std::exception& e) {
      log_line(std::string("the agent's channel failed: ") + e.what());
    }
    std::lock_guard lock(mutex_);
    closed_ = true;
    answered_.notify_all();
    stop_.request_stop();
  }

  int fd_;
  neuron::NeuronDevice& device_;
  std::stop_source stop_;
  std::mutex send_mutex_;
  std::mutex mutex_;
  std::condition_variable answered_;
  std::map<std::int64_t, std::optional<neuron::Socket>> answers_;
  std::int64_t next_claim_ = 1;
  bool closed_ = false;
  std::thread reader_;
};

// SIGTERM and SIGINT stop training; SIGUSR1 asks for a checkpoint first. Read with sigtimedwait
// on a thread of its own (the signals are blocked everywhere), which also tells the agent the
// phase the trainer is in as it changes: a rank hung in a collective says so.
class SignalsAndPhase {
 public:
  SignalsAndPhase(const sigset_t& signals, std::stop_source stop, std::atomic<bool>& checkpoint_at_stop,
                  std::function<void()> report_phase)
      : thread_([=, &checkpoint_at_stop](std::stop_token done) mutable {
          const timespec poll{0, 100'000'000};
          while (!done.stop_requested()) {
            const int signal = ::sigtimedwait(&signals, nullptr, &poll);
            if (signal == SIGUSR1) checkpoint_at_stop = true;  // before the stop, which training may see at once
            if (signal == SIGUSR1 || signal == SIGTERM || signal == SIGINT) stop.request_stop();
            report_phase();
          }
        }) {}

 private:
  std::jthread thread_;
};

Json exit_message(const neuron::RunResult& result) {
  Json exit = {{"steps", result.steps_completed}};
  switch (result.outcome) {
    case neuron::RunOutcome::completed:
      exit["exit_code"] = 0;
      exit["reason"] = "completed " + std::to_string(result.steps_completed) + " steps";
      break;
    case neuron::RunOutcome::cancelled:
      exit["signal"] = 15;
      exit["reason"] = "stopped at step " + std::to_string(result.steps_completed);
      break;
    case neuron::RunOutcome::nan_loss:
    case neuron::RunOutcome::failed:
      exit["exit_code"] = 1;
      exit["reason"] = result.failure_class + ": " + result.reason;
      if (result.peer_closed_rank) exit["peer_closed_rank"] = *result.peer_closed_rank;
      break;
  }
  return {{"exit", exit}};
}

Json train(const RankStart& start, neuron::NeuronDevice& device, AgentChannel& channel, std::stop_source& stop,
           const sigset_t& signals) {
  const LaunchMsg& launch = start.launch;
  std::atomic<bool> checkpoint_at_stop{false};
  std::atomic<std::int64_t> first_step_ms{0};
  std::mutex trainer_mutex;  // guards `trainer` against the phase reports reading a finished one
  neuron::Trainer* trainer = nullptr;
  std::string last_phase;
  std::int64_t last_checkpoint_ms = -1;
  std::atomic<std::int64_t> step{0};
  std::atomic<std::int64_t> progress_ms{0};
  std::mutex failures_mutex;  // the writer's thread counts failures; the phase reports read them
  CheckpointFailures failures;
  std::int64_t reported_failures = 0;
  const auto report_progress = [&] {
    std::lock_guard lock(trainer_mutex);
    if (!trainer) return;
    const std::string phase = neuron::to_string(trainer->phase());
    const std::int64_t checkpoint_ms = trainer->checkpoint_ms();
    CheckpointFailures failed;
    {
      std::lock_guard counted(failures_mutex);
      failed = failures;
    }
    if (phase == last_phase && checkpoint_ms == last_checkpoint_ms && failed.count == reported_failures) return;
    last_phase = phase;
    last_checkpoint_ms = checkpoint_ms;
    reported_failures = failed.count;
    Json progress = {{"step", step.load()},
                     {"at_ms", progress_ms.load()},
                     {"first_step_ms", first_step_ms.load()},
                     {"phase", phase},
                     {"checkpoint_ms", checkpoint_ms}};
    if (failed.count > 0) progress["checkpoint_failures"] = to_json(failed);
    channel.send({{"progress", std::move(progress)}});
  };
  SignalsAndPhase watch(signals, stop, checkpoint_at_stop, report_progress);

  neuron::TcpCommunicatorOptions comm_options;
  comm_options.attempt_id = launch.attempt_id;
  comm_options.rank = launch.rank;
  comm_options.peers = launch.peers;
  comm_options.timeout = start.collective_timeout;
  comm_options.link = start.faults.link;
  comm_options.stop = stop.get_token();
  comm_options.secret = launch.data_plane_secret;
  neuron::TcpCommunicator comm(comm_options, channel);
  neuron::TrainerOptions options;
  if (!launch.checkpoint_dir.empty() && launch.workload.checkpoint_every > 0) options.checkpoint_root = launch.checkpoint_dir;
  options.checkpoint_owner = launch.attempt_id;
  options.checkpoint_at_stop = &checkpoint_at_stop;
  // A retried attempt carries on from the checkpoint the daemon chose (and recorded) for all ranks.
  if (launch.resume_from) {
    options.resume_from = *launch.resume_from;
    log_line("resuming from " + *launch.resume_from);
  }
  options.on_step = [&](const neuron::StepMetrics& m) {
    step = m.step;
    progress_ms = to_unix_ms(SystemTimeSource().system_now());
    if (first_step_ms == 0) first_step_ms = progress_ms.load();
    channel.send({{"progress",
                   {{"step", m.step},
                    {"at_ms", progress_ms.load()},
                    {"first_step_ms", first_step_ms.load()},
                    {"busy_ms", m.busy_ms}}}});
    if (launch.rank == 0) {
      MetricsMsg metrics{launch.attempt_id,
                         {StepMetric{m.step, m.loss, m.grad_norm, m.param_norm, m.lr, m.samples_per_s, m.spike,
                                     m.spike_steps_to_return}},
                         {}};
      channel.send({{"metrics", encode(AgentMessage(std::move(metrics)))}});
    }
    log_line("step=" + std::to_string(m.step) + " loss=" + std::to_string(m.loss) + " grad_norm=" +
             std::to_string(m.grad_norm) + " param_norm=" + std::to_string(m.param_norm) + " lr=" + std::to_string(m.lr) +
             " samples_per_s=" + std::to_string(m.samples_per_s) + (m.spike ? " spike=1" : ""));
  };
  options.on_checkpoint = [&](const checkpoint::CheckpointWriteResult& result) {
    if (!result.written) {
      const std::string& error = result.written.error().message;
      {
        std::lock_guard counted(failures_mutex);
        ++failures.count;
        failures.last_error = utf8_tail(error, 1024);  // the cause is at the end: "...: Permission denied"
      }
      return log_line("checkpoint of step " + std::to_string(result.step) + " failed: " + error);
    }
    log_line("checkpoint written: step " + std::to_string(result.step));
    MetricsMsg metrics{launch.attempt_id, {}, {CheckpointReport{result.step, result.written->manifest_sha256}}};
    channel.send({{"metrics", encode(AgentMessage(std::move(metrics)))}});
  };
  neuron::Trainer kernel(launch.workload, comm, device.core(start.core), options);
  {
    std::lock_guard lock(trainer_mutex);
    trainer = &kernel;
  }
  log_line("simulated training: rank " + std::to_string(launch.rank) + " of " + std::to_string(launch.world_size) +
           ", core " + std::to_string(start.core) + ", " + std::to_string(launch.workload.steps) + " steps, " +
           to_string(launch.workload.precision) + ", pid " + std::to_string(::getpid()));
  const neuron::RunResult result = kernel.run(stop.get_token());
  report_progress();
  {
    std::lock_guard lock(trainer_mutex);
    trainer = nullptr;
  }
  return exit_message(result);
}

}  // namespace

int run_simulated_rank(int channel_fd) {
  // Before any thread exists, so every thread inherits the mask and only sigtimedwait sees them.
  sigset_t signals;
  ::sigemptyset(&signals);
  ::sigaddset(&signals, SIGTERM);
  ::sigaddset(&signals, SIGINT);
  ::sigaddset(&signals, SIGUSR1);
  ::pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  RankStart start;
  try {
    start = parse_start(receive_start_message(channel_fd));
  } catch (const std::exception& e) {
    std::cerr << "trainyard-agent " << kSimulatedRankFlag << ": bad start message: " << e.what() << "\n";
    return 2;
  }
  neuron::NeuronDevice device(start.cores, start.seed);
  device.set_faults(start.faults);
  std::stop_source stop;
  AgentChannel channel(channel_fd, device, stop);
  Json exit;
  try {
    exit = train(start, device, channel, stop, signals);
  } catch (const std::exception& e) {
    exit = {{"exit", {{"exit_code", 1}, {"reason", std::string("simulated run failed: ") + e.what()}, {"steps", 0}}}};
  }
  log_line("exit: " + exit["exit"]["reason"].get<std::string>());
  channel.send(exit);
  return 0;
}

}  // namespace trainyard::agent
