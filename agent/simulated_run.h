#pragma once
// A rank of a "simulated" job, as the agent sees it: the data-parallel training kernel runs in a
// process of its own (agent/simulated_rank_process.h), started and contained as a command job's
// is (agent/rank_process.h: the job's account, the attempt's cgroup, killed with everything it
// started), so a large spec cannot take the agent's memory and a stop never waits on the agent.
// Its channel (agent/rank_channel.h) is served by a relay thread here: the rank's claims of its
// left neighbour's data-plane connection go to the agent's DataPlaneServer, always for this
// attempt with this attempt's secret, and its progress, metrics, checkpoints and exit report are
// kept for the heartbeat.
//
// Memory: the rank's cgroup is limited to the job's memory_mb, or else to what the spec needs
// (proto/workload_memory.h) with room for the process itself.
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "agent/attempt_run.h"
#include "agent/rank_process.h"
#include "neuron/data_plane.h"
#include "neuron/device.h"

namespace trainyard::agent {

struct SimulatedRunContext {
  const neuron::NeuronDevice& device;  // the rank's device is made like it: cores, seed and faults
  neuron::DataPlaneServer& data_plane;
  int core = 0;  // the NeuronCore this rank trains on
  std::chrono::milliseconds collective_timeout{30000};
  std::optional<JobAccount> account;
  const Cgroups& cgroups;
  ProcessRegistry& processes;
  boost::asio::io_context& io;
};

class SimulatedRun final : public AttemptRun {
 public:
  SimulatedRun(const LaunchMsg& launch, const std::string& attempt_dir, SimulatedRunContext context,
               ExitCallback on_exit);
  ~SimulatedRun() override;

  void terminate(const std::string& reason) override { process_->terminate(reason); }
  void kill() override { process_->kill(); }
  void save_then_stop(const std::string& reason) override { process_->save_then_stop(reason); }
  AttemptReport report() override;
  std::vector<StepMetric> take_metrics() override;
  std::vector<CheckpointReport> take_checkpoints() override;
  void faults_changed(const FaultPlan& faults) override;

 private:
  void relay();  // the relay thread: everything the rank sends
  void keep(const Json& message);
  void serve_claim(const Json& claim);
  void finish(const ProcessEnd& end);
  void stop_relay();

  LaunchMsg launch_;
  neuron::DataPlaneServer& data_plane_;
  ExitCallback on_exit_;
  neuron::Socket channel_;  // the agent's end
  std::atomic<bool> ending_{false};
  std::mutex mutex_;  // guards what the relay keeps, below
  AttemptReport progress_;
  std::vector<StepMetric> metrics_;  // rank 0 only: the loss is the global batch's on every rank
  std::vector<CheckpointReport> checkpoints_;  // rank 0 alone writes them
  std::optional<AttemptExit> reported_exit_;
  std::thread relay_;
  std::unique_ptr<RankProcess> process_;
};

}  // namespace trainyard::agent
