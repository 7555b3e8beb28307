#include "agent/process_spawn.h"

#include "agent/descriptor_passing.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cerrno>
#include <cstring>

namespace trainyard::agent {
namespace {

constexpr int kChannelFd = 3;

// Enough for the path search (each candidate is built on the stack, and a shell script's argv) and
// the failure path.
constexpr std::size_t kChildStackBytes = 256 * 1024;

struct ChildArgs {
  const SpawnPlan* plan;
  pid_t agent_pid;
  sigset_t agent_mask;  // restored in the child just before exec
  SpawnFailure* failure;  // the agent's
};

// A file without #! that the kernel would not run: /bin/sh runs it, as execvpe does.
void run_as_shell_script(const char* file, char* const argv[], char* const envp[]) {
  constexpr std::size_t kMaxArgs = 4096;
  char* shell_argv[kMaxArgs + 2];
  char shell[] = "/bin/sh";
  shell_argv[0] = shell;
  shell_argv[1] = const_cast<char*>(file);
  std::size_t n = 1;
  while (argv[n] && n + 1 < kMaxArgs) {
    shell_argv[n + 1] = argv[n];
    ++n;
  }
  shell_argv[n + 1] = nullptr;
  ::execve(shell, shell_argv, envp);
  errno = ENOEXEC;
}

// execvpe's search, over the job's PATH rather than the agent's, with no allocation: each
// candidate is built in a buffer on the child's stack. As execvpe: a file the kernel cannot run as
// a program (ENOEXEC) is run by /bin/sh, and when every candidate failed, EACCES (one was there but
// closed to the account) wins over ENOENT. Returns only on failure, with errno set.
void exec_searching(char* const argv[], char* const envp[], const char* search_path) {
  if (std::strchr(argv[0], '/')) {
    ::execve(argv[0], argv, envp);
  } else {
    const std::size_t name_length = std::strlen(argv[0]);
    bool denied = false;
    char candidate[PATH_MAX];
    for (const char* entry = search_path ? search_path : "/usr/bin:/bin";; ++entry) {
      const char* end = std::strchr(entry, ':');
      const std::size_t dir_length = end ? static_cast<std::size_t>(end - entry) : std::strlen(entry);
      // An empty entry is the current directory, as execvpe takes it.
      const char* dir = dir_length ? entry : ".";
      const std::size_t used = dir_length ? dir_length : 1;
      if (used + 1 + name_length < sizeof candidate) {
        std::memcpy(candidate, dir, used);
        candidate[used] = '/';
        std::memcpy(candidate + used + 1, argv[0], name_length + 1);
        ::execve(candidate, argv, envp);
        if (errno == ENOEXEC) run_as_shell_script(candidate, argv, envp);
        if (errno == EACCES) denied = true;
        if (errno != ENOENT && errno != EACCES && errno != ENOTDIR && errno != ENODEV && errno != ESTALE &&
            errno != ETIMEDOUT) {
          return;
        }
      }
      if (!end) break;
      entry = end;
    }
    if (denied) errno = EACCES;
    return;
  }
  if (errno == ENOEXEC) run_as_shell_script(argv[0], argv, envp);
}

// A signal arriving before exec must not run one of the agent's handlers in the child (it would
// act on the agent's memory): handlers go back to the default, as posix_spawn does, while every
// signal is still blocked.
void reset_signal_handlers() {
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction current {};
    if (::sigaction(sig, nullptr, &current) != 0) continue;
    if (current.sa_handler == SIG_IGN || current.sa_handler == SIG_DFL) continue;
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    ::sigaction(sig, &fallback, nullptr);
  }
}

// Opens the files the output is copied to and sends them to the agent; the stage that failed, or none.
SpawnStage send_copies(const SpawnPlan& plan) {
  const int flags = O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (plan.copies_append ? O_APPEND : O_TRUNC);
  int fds[kMaxPassedDescriptors];
  int count = 0;
  if (plan.output_copy) {
    fds[count] = ::open(plan.output_copy, flags, 0644);
    if (fds[count++] < 0) return SpawnStage::open_output_copy;
  }
  if (plan.error_copy) {
    fds[count] = ::open(plan.error_copy, flags, 0644);
    if (fds[count++] < 0) return SpawnStage::open_error_copy;
  }
  // A message far below the socket pair's buffer: it does not block.
  (void)send_descriptors(plan.copy_socket, fds, count);
  return SpawnStage::none;
}

int child_main(void* raw) {
  const auto& args = *static_cast<const ChildArgs*>(raw);
  const SpawnPlan& plan = *args.plan;
  reset_signal_handlers();
  ::setpgid(0, 0);
  ::dup2(plan.output_fd, STDOUT_FILENO);
  ::dup2(plan.error_fd >= 0 ? plan.error_fd : plan.output_fd, STDERR_FILENO);
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  if (plan.channel_fd >= 0) {
    // dup2 onto itself would keep its close-on-exec flag.
    if (plan.channel_fd == kChannelFd) {
      ::fcntl(kChannelFd, F_SETFD, 0);
    } else {
      ::dup2(plan.channel_fd, kChannelFd);
    }
  }
  // Where it stopped, for the agent to read once the child is gone.
  const auto fail = [&](SpawnStage stage, const char* what) {
    *args.failure = SpawnFailure{stage, errno, what};
    ::_exit(127);
  };
  // First: joining a mount namespace moves the current directory to its root.
  if (plan.mount_namespace_fd >= 0 && ::setns(plan.mount_namespace_fd, CLONE_NEWNS) != 0) {
    fail(SpawnStage::private_tmp, "joining the attempt's mount namespace");
  }
  if (plan.net_namespace_fd >= 0 && ::setns(plan.net_namespace_fd, CLONE_NEWNET) != 0) {
    fail(SpawnStage::job_network, "joining the attempt's network namespace");
  }
  if (::chdir(plan.dir) != 0) fail(SpawnStage::enter_dir, "chdir to the attempt directory");
  for (std::size_t i = 0; i < plan.cgroup_fd_count; ++i) {
    if (::write(plan.cgroup_fds[i], "0", 1) != 1) fail(SpawnStage::join_cgroup, "joining the attempt's cgroup");
  }
  if (plan.account) {
    if (const char* failed = drop_privileges(*plan.account)) fail(SpawnStage::drop_account, failed);
  }
  if (plan.workdir && ::chdir(plan.workdir) != 0) fail(SpawnStage::enter_workdir, "chdir to the working directory");
  if (plan.output_copy || plan.error_copy) {
    if (const SpawnStage failed = send_copies(plan); failed != SpawnStage::none) fail(failed, "opening a file to copy output to");
  }
  // The job dies with the agent's thread that started it; if the agent died before this line,
  // nobody would be told, so check. Set after the account change, which clears it.
  if (!plan.outlives_agent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != args.agent_pid) ::_exit(127);
  }
  ::sigprocmask(SIG_SETMASK, &args.agent_mask, nullptr);
  exec_searching(plan.argv, plan.envp, plan.search_path);
  fail(SpawnStage::exec, "exec");
  return 127;
}

}  // namespace

pid_t spawn_process(const SpawnPlan& plan, SpawnFailure& failure) {
  void* stack = ::mmap(nullptr, kChildStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return -errno;
  ChildArgs args{&plan, ::getpid(), {}, &failure};
  sigset_t all;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &args.agent_mask);
  // Returns once the child has exec'd or exited (CLONE_VFORK): then its stack is free again.
  const pid_t pid = ::clone(child_main, static_cast<char*>(stack) + kChildStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD,
                            &args);
  const int clone_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &args.agent_mask, nullptr);
  ::munmap(stack, kChildStackBytes);
  return pid > 0 ? pid : -clone_errno;
}

int open_pidfd(pid_t pid) {
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  return fd >= 0 ? static_cast<int>(fd) : -errno;
}

}  // namespace trainyard::agent
