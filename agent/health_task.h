#pragma once
// One health suite the daemon asked this node to run (docs/DESIGN.md "Health checks"): the accelerator suite on
// every core of the device, or this node's rank of a collective suite over the data plane. Runs on
// its own thread (a suite takes from milliseconds to seconds and must not stall heartbeats); the
// result is posted to the I/O thread exactly once.
//
// Options come from the daemon and are validated here with the health library's strict codecs; a
// bad one answers with an error instead of a result.
#include <functional>
#include <thread>

#include "agent/attempt_run.h"
#include "neuron/data_plane.h"
#include "neuron/device.h"

namespace trainyard::agent {

struct HealthTaskContext {
  neuron::NeuronDevice& device;
  neuron::DataPlaneServer& data_plane;
  std::chrono::milliseconds collective_timeout{30000};
};

class HealthTask {
 public:
  using Done = std::function<void(HealthResultMsg)>;
  HealthTask(HealthCheckMsg request, HealthTaskContext context, PostToIo post, Done done);
  ~HealthTask();  // waits for the suite (each test has its own time budget)
  HealthTask(const HealthTask&) = delete;
  HealthTask& operator=(const HealthTask&) = delete;

 private:
  HealthResultMsg run() const;

  HealthCheckMsg request_;
  HealthTaskContext context_;
  std::jthread thread_;
};

}  // namespace trainyard::agent
