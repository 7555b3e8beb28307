#pragma once
// Starting a command job's process cheaply. fork() copies the agent's page
// tables, and the agent is a large process; clone(CLONE_VM | CLONE_VFORK), as posix_spawn does
// inside glibc, runs the child on the agent's memory with the calling thread suspended until the
// child has exec'd (or exited), so nothing is copied. posix_spawn itself cannot switch the account
// or set PR_SET_PDEATHSIG, hence this.
//
// The child shares the agent's memory: before exec it makes only system calls, reads the plan,
// and writes nothing but the `SpawnFailure` it was given, which the agent reads once the child is
// gone (as glibc's posix_spawn reports its child's errno); no malloc, no locks, no glibc set*id
// wrappers, no output (the agent says what went wrong).
#include <sys/types.h>

#include <cstddef>
#include <string>

#include "agent/job_account.h"

namespace trainyard::agent {

struct SpawnPlan {
  char* const* argv = nullptr;  // null-terminated; argv[0] without a '/' is looked up in `search_path`
  char* const* envp = nullptr;  // null-terminated
  int output_fd = -1;           // becomes stdout, and stderr unless `error_fd` is given; stdin is /dev/null
  const char* dir = nullptr;    // the child enters it before it drops to the account
  const JobAccount* account = nullptr;  // the child drops to it; nullptr: stays the agent's
  const char* workdir = nullptr;  // entered after `dir`, as the account: where it starts; nullptr: `dir`
  // cgroup.procs of the attempt's cgroup(s) (agent/attempt_cgroup.h): the child writes "0" to each,
  // joining them while still root, before anything of the job runs.
  const int* cgroup_fds = nullptr;
  std::size_t cgroup_fd_count = 0;
  int channel_fd = -1;  // becomes the child's descriptor 3, open across exec; -1: none
  bool outlives_agent = false;  // true: no PR_SET_PDEATHSIG (the fence keeper)
  // The job's PATH (execvpe would search the agent's own, whose entries may be root's and closed to
  // the job's account); nullptr: /usr/bin:/bin.
  const char* search_path = nullptr;
  // The mount namespace of the attempt's private /tmp and /dev/shm (agent/private_tmp.h), which the
  // child joins while still root; -1: the agent's.
  int mount_namespace_fd = -1;
  // The attempt's network namespace (agent/job_network.h), joined likewise; -1: the agent's.
  int net_namespace_fd = -1;
  // Files the job's output is copied to (sbatch -o/-e), opened by the child as the account in its
  // working directory, so a path reaches only what the account could write itself; the child sends
  // them (SCM_RIGHTS, output's first) over `copy_socket` before exec. Null: none.
  const char* output_copy = nullptr;
  const char* error_copy = nullptr;
  int copy_socket = -1;
  bool copies_append = false;  // a retry's attempt appends to what the earlier ones wrote
  int error_fd = -1;            // becomes stderr; -1: `output_fd` does
};

// What the child could not do before its program ran, and the errno it got.
enum class SpawnStage {
  none,
  private_tmp,
  job_network,
  enter_dir,
  join_cgroup,
  drop_account,
  enter_workdir,
  open_output_copy,
  open_error_copy,
  exec
};
struct SpawnFailure {
  SpawnStage stage = SpawnStage::none;
  int error = 0;
  const char* what = "";  // a string literal: what the child was doing
};

// Starts the process as the leader of a new process group, which dies with the calling thread
// (PR_SET_PDEATHSIG) unless it `outlives_agent`: call it from a thread that lives as long as the
// agent. What the child could not do it records in `failure` and exits with 127 (the caller reaps
// it and says why). Returns the pid, or -errno when no process could be created.
pid_t spawn_process(const SpawnPlan& plan, SpawnFailure& failure);

// A descriptor that becomes readable when `pid` (a child of ours) has exited; -errno on failure.
int open_pidfd(pid_t pid);

}  // namespace trainyard::agent
