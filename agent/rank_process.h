#pragma once
// The process of one rank of an attempt, whatever runs in it: a command job's argv, or a simulated
// rank (the agent's own binary, agent/simulated_rank_process.h). It starts in its own process group
// (agent/process_spawn.h: no copy of the agent) with stdout and stderr to the rank's log file, under
// the job's account, and inside the attempt's cgroup when cgroups are available. Its exit is
// watched on the I/O thread through a pidfd, so a rank costs no thread and the reaping waitpid
// never blocks.
//
// Account: given a `JobAccount`, the child drops to it before exec (agent/job_account.h), and the
// attempt directory, its log and the job's checkpoint directory are that account's, mode 0700 (the
// agent, as root, still reads them). The process starts in its attempt directory.
//
// Lifetime: the leader gets PR_SET_PDEATHSIG(SIGKILL), and the group is recorded in the
// `ProcessRegistry`, so a restarted agent kills what survived a kill -9 of its previous life.
// (Under systemd, KillMode=control-group also covers the time between the two.) With cgroups
// (agent/attempt_cgroup.h) the process starts under the attempt's limits, and when the leader
// exits every process in the cgroup is killed, `setsid` or not; its peak memory and OOM kills are
// read, and an OOM kill makes the exit reason say "out of memory" (failure class oom). Without
// cgroups the leader's process group is killed instead.
#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "agent/attempt_cgroup.h"
#include "agent/job_account.h"
#include "agent/process_registry.h"
#include "proto/messages.h"

namespace trainyard::agent {

struct RankProcessPlan {
  std::vector<std::string> argv;  // argv[0] is looked up in the environment's PATH
  std::map<std::string, std::string> environment;
  std::int64_t memory_limit_mb = 0;  // the cgroup's memory limit; 0: none
  std::string memory_limit_origin = "the job's memory_mb";  // where the limit comes from, for an OOM's reason
  int channel_fd = -1;  // given to the process as its descriptor 3; -1: none
};

// How the process ended, as the kernel and the agent saw it.
struct ProcessEnd {
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string status;       // "exited with code 3", "killed by signal 9 (Killed)", or why it never started
  std::string stop_reason;  // why the agent stopped it; empty: it was not stopped
  std::string oom;          // the OOM killer's part in its end; empty: none

  // The exit reason of the rank whose own account of its end is `own_reason` (the status when it
  // has none): the stop and the OOM kill come first, as they explain it.
  std::string reason(const std::string& own_reason) const;
};

class RankProcess {
 public:
  using EndCallback = std::function<void(ProcessEnd)>;
  // Prepares the rank's files and starts the process; on failure to start, `on_end` is posted with
  // exit code 127 and why.
  RankProcess(const LaunchMsg& launch, const std::string& attempt_dir, std::optional<JobAccount> account,
              const Cgroups& cgroups, ProcessRegistry& processes, boost::asio::io_context& io,
              const RankProcessPlan& plan, EndCallback on_end);
  // Destroyed before its exit was seen (the agent stopping): every process is killed and the
  // leader reaped here, which a SIGKILL makes quick.
  ~RankProcess();
  RankProcess(const RankProcess&) = delete;
  RankProcess& operator=(const RankProcess&) = delete;

  void terminate(const std::string& reason);       // SIGTERM to the process group
  void save_then_stop(const std::string& reason);  // SIGUSR1 to the process group
  void kill();                                     // SIGKILL to every process of the rank
  const std::string& log_path() const { return log_path_; }

 private:
  // The attempt directory, its log (returned open) and the checkpoint directory, for the account.
  int prepare_files(const std::string& attempt_dir);
  void fail_to_start(const std::string& reason);
  void watch_exit();
  void reap();
  void finish(int status);
  void signal_group(int signal);
  // Every process of the rank: its cgroup's, or else its process group's.
  void kill_everything();
  // Removes the cgroup; says whether the kernel's OOM killer acted in it ("" when not).
  std::string end_cgroup();

  LaunchMsg launch_;
  std::optional<JobAccount> account_;
  std::int64_t memory_limit_mb_;
  std::string memory_limit_origin_;
  std::unique_ptr<AttemptCgroup> cgroup_;
  ProcessRegistry& processes_;
  std::string log_path_;
  boost::asio::io_context& io_;
  EndCallback on_end_;
  pid_t pid_ = -1;
  bool exited_ = false;  // reaped, or never started
  std::string stop_reason_;
  boost::asio::posix::stream_descriptor exit_watch_;  // the process's pidfd
};

}  // namespace trainyard::agent
