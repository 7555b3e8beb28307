#pragma once
// The processes of one rank (one node's part) of an attempt, whatever runs in them: a command job's
// argv, once per local process (procs_per_node), or a simulated rank (the agent's own binary,
// agent/simulated_rank_process.h). Each starts in its own process group (agent/process_spawn.h: no
// copy of the agent) with stdout and stderr to the rank's log file, under the job's account, and
// inside the attempt's cgroup when cgroups are available. Exits are watched on the I/O thread
// through pidfds, so a rank costs no thread and the reaping waitpid never blocks.
//
// The local processes are one gang: the first to fail has the others killed, and the rank ends
// when the last is reaped, with the first failure's exit (else the first process's).
//
// Account: given a `JobAccount`, the child drops to it before exec (agent/job_account.h), and the
// attempt directory, its log and the job's checkpoint directory are that account's, mode 0700 (the
// agent, as root, still reads them). The process starts in the plan's workdir, else in its attempt
// directory. When the program could not be started (no such command, not executable, a working
// directory the account cannot enter) the log and the exit reason say why (agent/launch_failure.h).
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
#include "agent/job_network.h"
#include "agent/output_copy.h"
#include "agent/private_tmp.h"
#include "agent/process_registry.h"
#include "proto/messages.h"

namespace trainyard::agent {

struct RankProcessPlan {
  std::vector<std::string> argv;  // argv[0] is looked up in the environment's PATH
  // A batch script's text: written into the attempt directory, the job's own, and run in argv[0]'s place.
  std::optional<std::string> script;
  // One process is started per entry, in order, with that environment.
  std::vector<std::map<std::string, std::string>> environments;
  std::optional<std::string> workdir;  // where the program starts, entered as the account; none: the attempt directory
  std::int64_t memory_limit_mb = 0;  // the cgroup's memory limit; 0: none
  std::string memory_limit_origin = "the job's memory_mb";  // where the limit comes from, for an OOM's reason
  int channel_fd = -1;  // given to the process as its descriptor 3; -1: none
  // Where the attempt's own network is made when its launch asks for one (agent/job_network.h).
  const JobNetworkHost* network_host = nullptr;
  // Files its stdout (and stderr, unless `error_copy`) and its stderr are copied to as well as to
  // the log (agent/output_copy.h), relative to where it starts; appended to rather than emptied
  // when `copies_append`.
  std::optional<std::string> output_copy;
  std::optional<std::string> error_copy;
  bool copies_append = false;
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

  void terminate(const std::string& reason);       // SIGTERM to each process group
  void save_then_stop(const std::string& reason);  // SIGUSR1 to each process group
  void kill();                                     // SIGKILL to every process of the rank
  const std::string& log_path() const { return log_path_; }
  // The pid of each local process, in start order; -1 once reaped (or never started).
  std::vector<pid_t> local_pids() const;
  // Every process of the rank now, what the local processes started included: its cgroup's, or
  // else its process groups'.
  std::vector<pid_t> all_pids() const;

 private:
  struct LocalProcess {
    pid_t pid = -1;
    std::optional<int> status;     // its wait status, once reaped
    std::string launch_failure;    // why its program never ran; empty: it ran
    std::unique_ptr<boost::asio::posix::stream_descriptor> exit_watch;  // its pidfd
  };

  // The attempt directory, its log (returned open) and the checkpoint directory, for the account.
  int prepare_files(const std::string& attempt_dir);
  // The batch script's file in the attempt directory, the job's account's: its path.
  std::string write_script(const std::string& attempt_dir, const std::string& text);
  // The pipes and socket the output copies need (agent/output_copy.h); none when there are none.
  struct CopyPlumbing {
    int output[2] = {-1, -1};  // read, write
    int error[2] = {-1, -1};
    int socket[2] = {-1, -1};  // the agent's end, the child's
    void close_child_ends();
    void close_all();
  };
  static CopyPlumbing plumb_copies(const RankProcessPlan& plan);
  // Starts local process `index`; false when none could be created (the rank is then stopped).
  bool start_local(std::size_t index, const RankProcessPlan& plan, const std::string& attempt_dir, int log_fd,
                   const CopyPlumbing& copies);
  // Starts copying from the pipes, to the files local process 0 opened when it did.
  void start_copies(const RankProcessPlan& plan, CopyPlumbing& copies, int log_fd);
  void fail_to_start(const std::string& reason);
  void watch_exit(std::size_t index);
  void reap(std::size_t index);
  void finish();
  void signal_group(int signal);
  // Every process of the rank: its cgroup's, or else its process group's.
  void kill_everything();
  // Removes the cgroup; says whether the kernel's OOM killer acted in it ("" when not).
  std::string end_cgroup();
  // Makes the attempt's private /tmp and /dev/shm where it can (agent/private_tmp.h).
  void start_private_tmp(const std::string& attempt_dir, const RankProcessPlan& plan);
  // Lets the attempt's private /tmp and /dev/shm go; without them, removes what the attempt's own
  // group left in the host's.
  void end_private_tmp();

  LaunchMsg launch_;
  std::optional<JobAccount> account_;
  std::int64_t memory_limit_mb_;
  std::string memory_limit_origin_;
  std::unique_ptr<AttemptCgroup> cgroup_;
  std::unique_ptr<PrivateTmp> private_tmp_;  // a root agent's (agent/private_tmp.h)
  std::unique_ptr<JobNetwork> network_;     // the attempt's own network on this node, when it has one
  ProcessRegistry& processes_;
  std::string log_path_;
  std::string script_path_;  // the batch script run in argv[0]'s place; empty: none
  boost::asio::io_context& io_;
  EndCallback on_end_;
  std::shared_ptr<OutputCopy> output_copy_;  // when its output is copied to files
  std::vector<LocalProcess> locals_;
  std::size_t running_ = 0;  // started and not yet reaped
  std::optional<std::size_t> first_failed_;
  bool exited_ = false;  // every process reaped, or none started
  std::string stop_reason_;
};

}  // namespace trainyard::agent
