#pragma once
// A rank of a "command" job: argv started in its own process group (agent/process_spawn.h: no copy
// of the agent), stdout and stderr to the rank's log file. Its exit is watched on the I/O thread
// through a pidfd, so an attempt costs no thread and the reaping waitpid never blocks.
//
// Processes: `command.procs_per_node` on each node (as torchrun --nproc-per-node), one gang: RANK is
// NODE_RANK x procs_per_node + LOCAL_RANK, and WORLD_SIZE counts every process of every node.
//
// Environment: only the agent's variables named in `kInheritedEnvironment` (never its tokens or
// secrets: a job is another user's code), PATH set to `kJobPath` (never the agent's, whose entries
// may be root's own), PYTHONFAULTHANDLER=1 (a Python crash in native code prints its stacks to the
// log), then the job's `command.env`, then TRAINYARD_JOB_ID,
// TRAINYARD_ATTEMPT_ID, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, NODE_RANK and GROUP_RANK
// (the node's rank), GROUP_WORLD_SIZE and TRAINYARD_NODES (the nodes), ROLE_RANK, ROLE_WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT, TRAINYARD_CORES and TRAINYARD_VISIBLE_CORES (the process's share of the
// job's cores on the node, "first-last", counted within the job's share; also as
// NEURON_RT_VISIBLE_CORES unless the spec sets it), TRAINYARD_CHECKPOINT_DIR, TRAINYARD_RESUME_FROM
// (when resuming), TRAINYARD_PROGRESS_FILE, TRAINYARD_PROVENANCE_FILE and TRAINYARD_STACKS_FILE (one
// of each per process), TRAINYARD_STACKS_SIGNAL, and PYTHONPATH led by the agent's Python directory
// (agent/job_python.h: its sitecustomize dumps the Python stacks on that signal), then the spec's.
//
// Progress: a process reports training progress, metrics, phases and complete checkpoints in the
// file named in TRAINYARD_PROGRESS_FILE, as JSON lines (the `trainyard` Python module writes them)
// or as a rewritten "STEP [PHASE]" (agent/progress_file.h). The node reports the step of its slowest
// process that reports any; RANK 0's metrics go to the daemon, and once RANK 0 announces a
// checkpoint, only announced `step-N` directories of TRAINYARD_CHECKPOINT_DIR are resume points.
//
// Account, cgroup and lifetime: as every rank's process (agent/rank_process.h); USER, LOGNAME
// and HOME are the account's. Every rank starts in the job's `command.workdir` when it has one.
//
// Output files (sbatch -o/-e): a command's `output` and `error` patterns name files the rank's
// output is copied to as well as kept in its log (agent/output_copy.h), with Slurm's patterns filled
// in (proto/output_path.h). Only the first rank writes them unless the pattern names the node (%N,
// %n), as only the batch script's node writes Slurm's; a retry appends to what earlier attempts wrote.
//
// Idleness: at every report the agent looks at the rank's processes and says how long they have
// been idle and, once idle a while, where each is, its Python stack included (agent/rank_activity.h).
//
// Checkpoints: rank 0's agent reports the step directories that appear or change in
// TRAINYARD_CHECKPOINT_DIR while the attempt runs (agent/command_checkpoints.h).
//
// Provenance: a process may write a JSON object of facts about its run (library versions, data set
// ids) to the file named in TRAINYARD_PROVENANCE_FILE; it is read when the process has ended
// (agent/provenance_file.h) and sent with the exit.
#include <array>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "agent/attempt_cgroup.h"
#include "agent/command_checkpoints.h"
#include "agent/attempt_run.h"
#include "agent/job_account.h"
#include "agent/process_registry.h"
#include "agent/progress_file.h"
#include "agent/rank_activity.h"
#include "agent/rank_process.h"

namespace trainyard::agent {

// The agent's environment variables a job inherits (plus every LC_*): what programs need to run,
// nothing that could carry a credential.
inline constexpr std::array<std::string_view, 9> kInheritedEnvironment = {
    "HOME", "LANG", "LANGUAGE", "TZ", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR"};
// A job's PATH unless its spec sets one: Debian's for an ordinary account.
inline constexpr std::string_view kJobPath = "/usr/local/bin:/usr/bin:/bin";

// The files in the attempt directory through which a rank's process tells the agent things.
struct RankFiles {
  std::string progress;    // TRAINYARD_PROGRESS_FILE
  std::string provenance;  // TRAINYARD_PROVENANCE_FILE
  std::string stacks;      // TRAINYARD_STACKS_FILE
};

// A process's share of the job's `cores` on the node: as even as can be, the first ones one more;
// when there are fewer cores than processes, each process gets one, shared round-robin.
struct CoreShare {
  int first = 0;
  int count = 0;
};
CoreShare core_share(int cores, int procs, int local_rank);

// The file this rank copies a stream to, `pattern` filled in for it; none when it writes none.
std::optional<std::string> output_copy_path(const std::optional<std::string>& pattern, const LaunchMsg& launch);

// The files of the process whose RANK is `global_rank`, in the attempt directory.
RankFiles rank_files(const std::string& attempt_dir, int global_rank);

// The environment of a command job's local process `local_rank`, from the agent's own
// (`agent_environment`, as `environ`) filtered by `kInheritedEnvironment`, the job's spec and the
// variables listed above.
std::map<std::string, std::string> command_environment(const LaunchMsg& launch, const RankFiles& files,
                                                       char** agent_environment, const JobAccount* account = nullptr,
                                                       int local_rank = 0, const std::string& python_dir = "");

class CommandRun final : public AttemptRun {
 public:
  // Starts the process, in a cgroup of its own when `cgroups` are available; on failure to start,
  // the exit callback is posted with the reason.
  CommandRun(const LaunchMsg& launch, const std::string& attempt_dir, const std::string& python_dir,
             std::optional<JobAccount> account, const Cgroups& cgroups, const JobNetworkHost* network_host,
             ProcessRegistry& processes, boost::asio::io_context& io, ExitCallback on_exit);

  void terminate(const std::string& reason) override { process_->terminate(reason); }
  void kill() override { process_->kill(); }
  void save_then_stop(const std::string& reason) override { process_->save_then_stop(reason); }  // SIGUSR1
  AttemptReport report() override;
  std::vector<CheckpointReport> take_checkpoints() override;
  std::vector<StepMetric> take_metrics() override;
  std::map<std::string, std::string> environment() const override { return environment_; }

  const std::string& log_path() const { return process_->log_path(); }

 private:
  void finish(const ProcessEnd& end);
  // The rank's idleness and, once idle a while, where its processes are (agent/rank_activity.h).
  void look_at_processes(AttemptReport& report);

  struct LocalProgress {
    std::int64_t step = 0;
    std::string phase;
    bool reported = false;
    bool warned_skipped = false;  // its file had lines that are not progress (said once)
  };

  LaunchMsg launch_;
  std::vector<RankFiles> files_;         // one per local process
  std::vector<LocalProgress> progress_;  // one per local process
  std::vector<ProgressFile> progress_files_;  // one per local process
  std::vector<StepMetric> metrics_;  // RANK 0's, not yet sent
  std::int64_t last_metric_step_ = 0;
  std::int64_t checkpoint_ms_ = 0;  // the node's first process's checkpoint phases
  // RANK 0's checkpoint_written records not yet reported; once it made one, only those count.
  std::vector<WrittenCheckpoint> announced_;
  bool announces_checkpoints_ = false;
  std::map<std::string, std::string> environment_;  // as given to the first process, secrets masked
  ExitCallback on_exit_;
  std::int64_t last_step_ = 0;
  std::optional<TimePoint> last_progress_at_;
  std::optional<TimePoint> first_step_at_;
  std::string phase_;
  std::optional<CommandCheckpointWatch> checkpoints_;
  RankActivity activity_;  // rank 0's, with a checkpoint directory
  std::unique_ptr<RankProcess> process_;  // last: its end may be posted while the rest is set up
};

}  // namespace trainyard::agent
