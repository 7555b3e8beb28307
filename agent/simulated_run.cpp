#include "agent/simulated_run.h"

#include <filesystem>
#include <utility>
#include <spdlog/spdlog.h>

#include "checkpoint/checkpoint.h"
#include "neuron/tcp_communicator.h"

namespace trainyard::agent {

SimulatedRun::SimulatedRun(const LaunchMsg& launch, const std::string& attempt_dir, SimulatedRunContext context,
                           PostToIo post, ExitCallback on_exit)
    : launch_(launch),
      log_path_(attempt_dir + "/rank-" + std::to_string(launch.rank) + ".log"),
      context_(context),
      post_(std::move(post)),
      on_exit_(std::move(on_exit)) {
  std::filesystem::create_directories(attempt_dir);
  log_.open(log_path_, std::ios::app);
  // The token comes in as the argument: reading thread_ from the new thread would race with this
  // assignment and could yield the token of the empty jthread, which never stops.
  thread_ = std::jthread([this](std::stop_token stop) { train(stop); });
}

SimulatedRun::~SimulatedRun() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

void SimulatedRun::log_line(const std::string& line) {
  std::lock_guard lock(log_mutex_);
  log_ << line << '\n';
  log_.flush();
}

void SimulatedRun::train(std::stop_token stop) {
  AttemptExit exit;
  try {
    neuron::TcpCommunicatorOptions comm_options;
    comm_options.attempt_id = launch_.attempt_id;
    comm_options.rank = launch_.rank;
    comm_options.peers = launch_.peers;
    comm_options.timeout = context_.collective_timeout;
    comm_options.link = context_.link;
    comm_options.stop = stop;
    comm_options.secret = launch_.data_plane_secret;
    neuron::TcpCommunicator comm(comm_options, context_.data_plane);
    neuron::TrainerOptions options;
    if (!launch_.checkpoint_dir.empty() && launch_.workload.checkpoint_every > 0) options.checkpoint_root = launch_.checkpoint_dir;
    options.checkpoint_owner = launch_.attempt_id;
    options.checkpoint_at_stop = &checkpoint_at_stop_;
    // A retried attempt carries on from the checkpoint the daemon chose (and recorded) for all ranks.
    if (launch_.resume_from) {
      options.resume_from = *launch_.resume_from;
      log_line("resuming from " + *launch_.resume_from);
    }
    options.on_step = [this](const neuron::StepMetrics& m) {
      step_ = m.step;
      progress_ms_ = to_unix_ms(SystemTimeSource().system_now());
      if (first_step_ms_ == 0) first_step_ms_ = progress_ms_.load();
      if (launch_.rank == 0) {
        std::lock_guard lock(metrics_mutex_);
        metrics_.push_back(StepMetric{m.step, m.loss, m.grad_norm, m.param_norm, m.lr, m.samples_per_s, m.spike,
                                      m.spike_steps_to_return});
      }
      log_line("step=" + std::to_string(m.step) + " loss=" + std::to_string(m.loss) + " grad_norm=" +
               std::to_string(m.grad_norm) + " param_norm=" + std::to_string(m.param_norm) + " lr=" + std::to_string(m.lr) +
               " samples_per_s=" + std::to_string(m.samples_per_s) + (m.spike ? " spike=1" : ""));
    };
    options.on_checkpoint = [this](const checkpoint::CheckpointWriteResult& result) {
      if (!result.written) {
        return log_line("checkpoint of step " + std::to_string(result.step) + " failed: " + result.written.error().message);
      }
      log_line("checkpoint written: step " + std::to_string(result.step));
      std::lock_guard lock(metrics_mutex_);
      checkpoints_.push_back(CheckpointReport{result.step, result.written->manifest_sha256});
    };
    neuron::Trainer trainer(launch_.workload, comm, context_.device.core(context_.core), options);
    {
      std::lock_guard lock(trainer_mutex_);
      trainer_ = &trainer;
    }
    log_line("simulated training: rank " + std::to_string(launch_.rank) + " of " + std::to_string(launch_.world_size) +
             ", core " + std::to_string(context_.core) + ", " + std::to_string(launch_.workload.steps) + " steps, " +
             to_string(launch_.workload.precision));
    const neuron::RunResult result = trainer.run(stop);
    {
      std::lock_guard lock(trainer_mutex_);
      checkpoint_ms_ = trainer.checkpoint_ms();
      trainer_ = nullptr;
    }
    exit.steps = result.steps_completed;
    switch (result.outcome) {
      case neuron::RunOutcome::completed:
        exit.exit_code = 0;
        exit.reason = "completed " + std::to_string(result.steps_completed) + " steps";
        break;
      case neuron::RunOutcome::cancelled:
        exit.signal = 15;
        exit.reason = "stopped at step " + std::to_string(result.steps_completed);
        break;
      case neuron::RunOutcome::nan_loss:
      case neuron::RunOutcome::failed:
        exit.exit_code = 1;
        exit.reason = result.failure_class + ": " + result.reason;
        exit.peer_closed_rank = result.peer_closed_rank;
        break;
    }
  } catch (const std::exception& e) {
    {
      std::lock_guard lock(trainer_mutex_);
      trainer_ = nullptr;
    }
    exit.exit_code = 1;
    exit.reason = std::string("simulated run failed: ") + e.what();
  }
  log_line("exit: " + exit.reason);
  exit.log_tail = read_exit_tail(log_path_);
  post_([this, exit = std::move(exit)]() mutable {
    if (!stop_reason_.empty() && exit.exit_code != 0) exit.reason = stop_reason_ + " (" + exit.reason + ")";
    on_exit_(std::move(exit));
  });
}

void SimulatedRun::terminate(const std::string& reason) {
  if (stop_reason_.empty()) stop_reason_ = reason;
  thread_.request_stop();
}

void SimulatedRun::kill() { thread_.request_stop(); }

void SimulatedRun::save_then_stop(const std::string& reason) {
  checkpoint_at_stop_ = true;  // before the stop, which the training thread may see at once
  terminate(reason);
}

std::vector<StepMetric> SimulatedRun::take_metrics() {
  std::lock_guard lock(metrics_mutex_);
  return std::exchange(metrics_, {});
}

std::vector<CheckpointReport> SimulatedRun::take_checkpoints() {
  std::lock_guard lock(metrics_mutex_);
  return std::exchange(checkpoints_, {});
}

AttemptReport SimulatedRun::report() {
  AttemptReport r{launch_.attempt_id, launch_.job_id, step_.load(), std::nullopt, ""};
  if (const auto ms = progress_ms_.load()) r.last_progress_at = from_unix_ms(ms);
  if (const auto ms = first_step_ms_.load()) r.first_step_at = from_unix_ms(ms);
  std::lock_guard lock(trainer_mutex_);
  if (trainer_) {
    r.phase = neuron::to_string(trainer_->phase());
    checkpoint_ms_ = trainer_->checkpoint_ms();
  }
  r.checkpoint_ms = checkpoint_ms_;
  return r;
}

}  // namespace trainyard::agent
