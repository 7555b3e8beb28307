#pragma once
// What the agent service acts through, as interfaces: its link to the daemon, the runs and health
// checks it starts, and its timers. Production builds the real ones (agent/main.cpp); the unit
// tests give fakes, and drive reconnects, exits and kill grace without sockets, processes or
// real time.
//
// Threading contract: every call and every callback is on the agent's I/O thread.
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "agent/attempt_cgroup.h"
#include "agent/attempt_run.h"
#include "agent/fence_keeper.h"
#include "agent/health_task.h"
#include "agent/job_account.h"
#include "agent/job_network.h"
#include "agent/process_registry.h"
#include "net/tls.h"
#include "net/websocket.h"
#include "net/ws_client.h"
#include "neuron/data_plane.h"
#include "neuron/device.h"
#include "proto/timers.h"

namespace trainyard::agent {

// Opens links to the daemon. One link per call; reconnecting is the agent's policy.
class DaemonLinks {
 public:
  virtual ~DaemonLinks() = default;
  // Starts connecting to the daemon at `server` (one of the agent's --server URLs), presenting
  // `bearer_token`; the handlers report the link's life (on_closed exactly once, also when the
  // connect fails).
  virtual std::shared_ptr<net::WebSocketPeer> connect(const std::string& server, const std::string& bearer_token,
                                                      net::WebSocketClientHandlers handlers) = 0;
};

// The daemon's /v1/agent/connect over WebSocket (wss for https://, verified with `tls`).
class WebSocketDaemonLinks final : public DaemonLinks {
 public:
  WebSocketDaemonLinks(boost::asio::io_context& io, net::TlsContext tls);
  std::shared_ptr<net::WebSocketPeer> connect(const std::string& server, const std::string& bearer_token,
                                              net::WebSocketClientHandlers handlers) override;

 private:
  boost::asio::io_context& io_;
  net::TlsContext tls_;
};

// A one-shot timer. Starting it again replaces what was pending; cancelling (or destroying) it
// means the callback never runs.
// Starts the work the daemon hands the node: attempt runs and health checks.
class Workloads {
 public:
  virtual ~Workloads() = default;
  // `core` is the NeuronCore the agent picked for a simulated rank. Throws InvalidInput naming the
  // launch's field when the run cannot be started as asked (a job id without an account of its own).
  // `cluster` is the daemon's (proto WelcomeMsg::cluster), which the job's own account comes from.
  virtual std::unique_ptr<AttemptRun> start_run(const LaunchMsg& launch, const std::string& cluster,
                                                const std::string& attempt_dir, int core, ExitCallback on_exit) = 0;
  virtual std::unique_ptr<HealthTask> start_health_check(const HealthCheckMsg& request, HealthTask::Done done) = 0;
};

// Every rank as a process of its own, in a cgroup when `cgroups` are available: a command job's
// argv (agent/command_run.h), or the simulated kernel (agent/simulated_run.h); health checks run
// on the agent's own device.
class LocalWorkloads final : public Workloads {
 public:
  LocalWorkloads(boost::asio::io_context& io, neuron::NeuronDevice& device, neuron::DataPlaneServer& data_plane,
                 ProcessRegistry& processes, JobAccounts job_accounts, Cgroups cgroups,
                 std::chrono::milliseconds collective_timeout, std::string job_python_dir,
                 JobNetworkHost network_host = {});
  // Removes the agent's cgroup parents (its runs, destroyed before, removed their own).
  ~LocalWorkloads() override;
  std::unique_ptr<AttemptRun> start_run(const LaunchMsg& launch, const std::string& cluster,
                                        const std::string& attempt_dir, int core, ExitCallback on_exit) override;
  std::unique_ptr<HealthTask> start_health_check(const HealthCheckMsg& request, HealthTask::Done done) override;

 private:
  PostToIo post_to_io();

  boost::asio::io_context& io_;
  neuron::NeuronDevice& device_;
  neuron::DataPlaneServer& data_plane_;
  ProcessRegistry& processes_;
  JobAccounts job_accounts_;
  Cgroups cgroups_;
  std::chrono::milliseconds collective_timeout_;
  std::string job_python_dir_;  // first on command jobs' PYTHONPATH (agent/job_python.h)
  JobNetworkHost network_host_;  // attempts' own networks (agent/job_network.h)
};

struct AgentDeps {
  DaemonLinks& links;
  Workloads& workloads;
  Timers& timers;
  FenceKeeper* keeper = nullptr;  // none: only the agent itself fences
};

}  // namespace trainyard::agent
