#pragma once
// A private /tmp and /dev/shm for each attempt. On the host they are shared: files a job
// left there outlived it (a 64 MB /dev/shm file kept its RAM after its cgroup was gone) and could be
// planted for the next job. A root agent makes a mount namespace for the attempt with two fresh tmpfs
// on /tmp and /dev/shm, and each of the attempt's processes on the node joins it before it drops to
// the job's account (agent/process_spawn.h): the ranks of one attempt on one node share them
// (PyTorch passes tensors between local processes through /dev/shm), and no other process sees them.
// The namespace also has a /proc of its own with hidepid=invisible: a job's account sees its own
// processes only, never another job's command line (nor the agent's).
// Nothing is mounted in the host's namespace: the namespace lives while the agent holds it (an fd,
// closed when the attempt ends, or when the agent dies) or one of the attempt's processes is in it,
// and the tmpfs, with what was in them, go with it. Each is bounded by the job's memory_mb when it has
// one (its pages are charged to the attempt's cgroup too), else tmpfs's default of half the RAM.
//
// A root agent that cannot mount (a container without CAP_SYS_ADMIN), or whose attempt needs a path
// in /tmp or /dev/shm (path_in_private_dirs), runs the attempt with the host's /tmp, /dev/shm and
// /proc and, at its end, removes what the attempt's own group (a per-job account's,
// agent/job_account.h) left in them. An agent that is not root cannot do either: its
// jobs run as itself and share the host's /tmp.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace trainyard::agent {

class PrivateTmp {
 public:
  // Makes the namespace, each tmpfs of at most `size_mb` (0: tmpfs's default); throws
  // std::runtime_error saying what failed, having left nothing behind.
  explicit PrivateTmp(std::int64_t size_mb);
  ~PrivateTmp();  // lets the namespace go once no process is in it
  PrivateTmp(const PrivateTmp&) = delete;
  PrivateTmp& operator=(const PrivateTmp&) = delete;

  // For setns(fd, CLONE_NEWNS); close-on-exec, so no job holds it.
  int mount_namespace() const { return fd_; }
  // Why the namespace's /proc shows every process of the host ("" when it shows only those of the
  // process's own account): a kernel older than 5.8 has no per-mount hidepid.
  const std::string& proc_error() const { return proc_error_; }

 private:
  int fd_ = -1;
  std::string proc_error_;
};

// The first of `paths` (symbolic links resolved) that lies in /tmp or /dev/shm, which the private
// pair would hide from the attempt's processes; "" when none does. Such an attempt runs with the
// host's pair (an agent's --work-dir or checkpoint root in /tmp, or a job's own workdir there).
std::string path_in_private_dirs(const std::vector<std::string>& paths);

// Removes the entries directly in each of `dirs` whose group is `gid` (with all below them, links
// not followed): what an attempt with a group of its own left in the host's /tmp and /dev/shm.
void remove_files_of_group(gid_t gid, const std::vector<std::string>& dirs);

}  // namespace trainyard::agent
