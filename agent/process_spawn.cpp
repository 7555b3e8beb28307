#include "agent/process_spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trainyard::agent {
namespace {

constexpr int kChannelFd = 3;

// Enough for execvpe's path search (it builds each candidate on the stack) and the failure path.
constexpr std::size_t kChildStackBytes = 256 * 1024;

struct ChildArgs {
  const SpawnPlan* plan;
  pid_t agent_pid;
  sigset_t agent_mask;  // restored in the child just before exec
};

void write_error(const char* what, const char* detail) {
  const char* prefix = "trainyard-agent: ";
  (void)!::write(STDERR_FILENO, prefix, std::strlen(prefix));
  (void)!::write(STDERR_FILENO, what, std::strlen(what));
  if (detail) (void)!::write(STDERR_FILENO, detail, std::strlen(detail));
  (void)!::write(STDERR_FILENO, "\n", 1);
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

int child_main(void* raw) {
  const auto& args = *static_cast<const ChildArgs*>(raw);
  const SpawnPlan& plan = *args.plan;
  reset_signal_handlers();
  ::setpgid(0, 0);
  ::dup2(plan.output_fd, STDOUT_FILENO);
  ::dup2(plan.output_fd, STDERR_FILENO);
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
  const char* failed = ::chdir(plan.dir) == 0 ? nullptr : "chdir to the attempt directory";
  for (std::size_t i = 0; !failed && i < plan.cgroup_fd_count; ++i) {
    if (::write(plan.cgroup_fds[i], "0", 1) != 1) failed = "joining the attempt's cgroup";
  }
  if (!failed && plan.account) failed = drop_privileges(*plan.account);
  if (failed) {
    write_error("cannot start the job: ", failed);
    ::_exit(127);
  }
  // The job dies with the agent's thread that started it; if the agent died before this line,
  // nobody would be told, so check. Set after the account change, which clears it.
  if (!plan.outlives_agent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != args.agent_pid) ::_exit(127);
  }
  ::sigprocmask(SIG_SETMASK, &args.agent_mask, nullptr);
  ::execvpe(plan.argv[0], plan.argv, plan.envp);
  write_error("cannot execute the command: ", std::strerror(errno));
  ::_exit(127);
}

}  // namespace

pid_t spawn_process(const SpawnPlan& plan) {
  void* stack = ::mmap(nullptr, kChildStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return -errno;
  ChildArgs args{&plan, ::getpid(), {}};
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
