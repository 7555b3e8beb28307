#pragma once
// A rank of a "simulated" job: the data-parallel training kernel (neuron/trainer.h) on one
// simulated NeuronCore of this node, with a TcpCommunicator to the other ranks through the
// agent's data-plane port. Runs on its own thread; the exit is posted to the I/O thread.
#include <atomic>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/attempt_run.h"
#include "neuron/data_plane.h"
#include "neuron/device.h"
#include "neuron/trainer.h"
#include "proto/faults.h"

namespace trainyard::agent {

struct SimulatedRunContext {
  neuron::NeuronDevice& device;
  neuron::DataPlaneServer& data_plane;
  LinkFault link;
  int core = 0;                                  // the NeuronCore this rank trains on
  std::chrono::milliseconds collective_timeout{30000};
};

class SimulatedRun final : public AttemptRun {
 public:
  SimulatedRun(const LaunchMsg& launch, const std::string& attempt_dir, SimulatedRunContext context, PostToIo post,
               ExitCallback on_exit);
  ~SimulatedRun() override;

  void terminate(const std::string& reason) override;
  void kill() override;  // the kernel has no process to kill: the stop flag is all there is
  void save_then_stop(const std::string& reason) override;
  AttemptReport report() override;
  std::vector<StepMetric> take_metrics() override;
  std::vector<CheckpointReport> take_checkpoints() override;

 private:
  void train(std::stop_token stop);
  void log_line(const std::string& line);

  LaunchMsg launch_;
  std::string log_path_;
  SimulatedRunContext context_;
  PostToIo post_;
  ExitCallback on_exit_;
  std::mutex log_mutex_;
  std::ofstream log_;
  std::string stop_reason_;  // I/O thread
  std::mutex trainer_mutex_;  // guards trainer_ against the heartbeat reading a finished trainer
  neuron::Trainer* trainer_ = nullptr;
  std::mutex metrics_mutex_;
  std::vector<StepMetric> metrics_;  // rank 0 only: the loss is the global batch's on every rank
  std::vector<CheckpointReport> checkpoints_;  // guarded by metrics_mutex_; rank 0 alone writes them
  std::atomic<std::int64_t> step_{0};
  std::atomic<std::int64_t> progress_ms_{0};
  std::atomic<std::int64_t> first_step_ms_{0};
  std::atomic<std::int64_t> checkpoint_ms_{0};  // the trainer's, kept after it is gone
  std::atomic<bool> checkpoint_at_stop_{false};
  std::jthread thread_;
};

}  // namespace trainyard::agent
