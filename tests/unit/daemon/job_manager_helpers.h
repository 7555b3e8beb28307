#pragma once
// What the job manager's tests share: a cluster of fake agents running one job.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "tests/unit/daemon/accelerator_reports.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {

// A cluster of `n` 8-core nodes named n1.. with one running `nodes`-wide job; returns its attempt.
struct RunningJob {
  Job job;
  AttemptId attempt = 0;
  std::vector<std::string> nodes;  // by rank
};

inline RunningJob start_job(Cluster& c, JobSpec spec, bool all_started = true) {
  RunningJob r;
  r.job = c.submit(std::move(spec));
  const auto attempts = c.stored_attempts(r.job.id);
  EXPECT_FALSE(attempts.empty()) << "job " << r.job.id << " was not placed";
  if (attempts.empty()) return r;
  r.attempt = attempts.back().id;
  r.nodes = c.nodes_of(r.attempt);
  if (all_started) {
    for (const auto& node : r.nodes) c.started(node, r.attempt);
  }
  return r;
}

// A spec that waits for nodes the cluster does not have (yet), rather than being refused.
inline JobSpec waiting_spec(int nodes) {
  JobSpec spec = command_spec(nodes);
  spec.wait_for_capacity = true;
  return spec;
}

// Answers every health task sent to the nodes since the last call as passed; returns how many.
inline int pass_health_tasks(Cluster& c, std::map<std::string, std::size_t>& answered) {
  int count = 0;
  for (const auto& [name, agent] : c.agents) {
    const auto tasks = agent->all<HealthCheckMsg>();
    for (std::size_t i = answered[name]; i < tasks.size(); ++i, ++count) {
      const HealthCheckMsg& task = tasks[i];
      const Json result = task.suite == HealthSuite::accelerator
                              ? passing_report()
                              : passing_collective(task.rank, static_cast<int>(task.peers.size()));
      c.send(name, HealthResultMsg{task.task_id, result, ""});
    }
    answered[name] = tasks.size();
  }
  return count;
}

// Every first attempt is pre-flighted.
inline JobManagerConfig preflight_config() {
  JobManagerConfig config = test_config();
  config.preflight_checks = true;
  return config;
}

inline void connect_nodes(Cluster& c, int n) {
  for (int i = 1; i <= n; ++i) c.connect("n" + std::to_string(i));
}

// The smallest training state a checkpoint can hold, at `step`.
inline checkpoint::TrainingState state_at(std::int64_t step) {
  checkpoint::TrainingState s;
  s.step = step;
  s.dims = {1, 1};
  s.params = {1, 1};
  s.adam_m = {0, 0};
  s.adam_v = {0, 0};
  return s;
}

// A rank 0 on `node` that wrote the checkpoint of `step` into the launch's directory and reports it.
inline void report_checkpoint(Cluster& c, const std::string& node, const LaunchMsg& launch, std::int64_t step) {
  const auto written = checkpoint::write_checkpoint(launch.checkpoint_dir, state_at(step));
  MetricsMsg msg;
  msg.attempt_id = launch.attempt_id;
  msg.checkpoints.push_back(CheckpointReport{step, checkpoint::manifest_sha256(written).value()});
  c.send(node, msg);
}

}  // namespace trainyard::daemon::testing
