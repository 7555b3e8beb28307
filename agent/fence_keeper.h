#pragma once
// The fence keeper: what stops the node's attempts when the agent cannot. The agent stops its own
// attempts once its fence time has passed without an acknowledged heartbeat (agent/agent.h), but an
// agent that is frozen (SIGSTOP, a stalled VM) or dead (a kill -9 leaves `setsid` processes in their
// cgroups) cannot, while the daemon replaces the node's attempts after its node timeout. So after
// every acknowledgement the agent tells the keeper the deadline by which, unless it hears of a later
// one, the attempts must stop; when it passes, the keeper does what the agent's fence would have
// done (agent/fence_keeper_process.h); when the agent dies, it stops what is left of its attempts
// at once and, once they are surely gone, tells the daemon so (agent/stop_report.h), which then
// replaces them without waiting out the kill grace. So the agent also tells it, after every launch
// and exit, which attempts run. The deadline is the agent's own fence deadline plus a
// twentieth of the fence time, so a live agent always fences first, within the margin the daemon's
// node timeout leaves (daemon/policy/fence_timing.h).
//
// Threading contract: I/O thread.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "agent/stop_report.h"
#include "neuron/tcp_socket.h"
#include "proto/job.h"
#include "proto/json_reader.h"

namespace trainyard::agent {

class FenceKeeper {
 public:
  virtual ~FenceKeeper() = default;
  // The attempts the agent runs (none: an empty list) and the longest kill grace among them: what
  // is stopped (SIGTERM, `grace`, SIGKILL) when the agent dies or a deadline passes, and what a dead
  // agent's keeper reports stopped.
  virtual void running(const std::vector<AttemptId>& attempts, std::chrono::milliseconds grace) = 0;
  // Unless told a later deadline first, the node's attempts are stopped at `deadline`.
  virtual void keep_until(std::chrono::steady_clock::time_point deadline) = 0;
  // No deadline: no attempt runs, or the node does not fence.
  virtual void clear() = 0;
};

// What the keeper stops: the agent's recorded process groups and its attempt cgroups; and whom it
// tells once a dead agent's attempts are stopped.
struct FenceKeeperPlace {
  std::string node;
  std::string processes_dir;  // the agent's ProcessRegistry directory
  std::string cgroup_root;    // normally /sys/fs/cgroup
  std::string cgroup_name;    // agent_cgroup_name(node, work dir)
  StopReportTarget daemons;
};

// The keeper as a process of its own: `trainyard-agent --fence-keeper`, root like the agent, in
// the agent's cgroup but not in its process group, and not killed when the agent dies.
class ProcessFenceKeeper final : public FenceKeeper {
 public:
  // Starts the keeper; throws std::runtime_error when it cannot.
  ProcessFenceKeeper(boost::asio::io_context& io, const FenceKeeperPlace& place);
  // Stands the keeper down (the agent is stopping its attempts itself) and reaps it.
  ~ProcessFenceKeeper() override;
  ProcessFenceKeeper(const ProcessFenceKeeper&) = delete;
  ProcessFenceKeeper& operator=(const ProcessFenceKeeper&) = delete;

  void running(const std::vector<AttemptId>& attempts, std::chrono::milliseconds grace) override;
  void keep_until(std::chrono::steady_clock::time_point deadline) override;
  void clear() override;

 private:
  void send(const Json& message);
  void watch_exit();

  neuron::Socket channel_;
  pid_t pid_ = -1;
  bool exited_ = false;
  boost::asio::posix::stream_descriptor exit_watch_;
};

}  // namespace trainyard::agent
