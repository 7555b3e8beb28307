#include "agent/rank_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "agent/process_spawn.h"
#include "checkpoint/checkpoint.h"

namespace trainyard::agent {

std::string ProcessEnd::reason(const std::string& own_reason) const {
  std::string text = own_reason.empty() ? status : own_reason;
  if (!stop_reason.empty()) text = stop_reason + " (" + text + ")";
  if (!oom.empty()) text = oom + "; " + text;
  return text;
}

RankProcess::RankProcess(const LaunchMsg& launch, const std::string& attempt_dir, std::optional<JobAccount> account,
                         const Cgroups& cgroups, ProcessRegistry& processes, boost::asio::io_context& io,
                         const RankProcessPlan& plan, EndCallback on_end)
    : launch_(launch),
      account_(std::move(account)),
      memory_limit_mb_(plan.memory_limit_mb),
      memory_limit_origin_(plan.memory_limit_origin),
      processes_(processes),
      log_path_(attempt_dir + "/rank-" + std::to_string(launch.rank) + ".log"),
      io_(io),
      on_end_(std::move(on_end)),
      exit_watch_(io) {
  int log_fd = -1;
  try {
    log_fd = prepare_files(attempt_dir);
  } catch (const std::exception& e) {
    fail_to_start(e.what());
    return;
  }
  if (cgroups.available()) {
    const CgroupLimits limits{launch_.cores, memory_limit_mb_ * 1024 * 1024, cgroups.pids_max()};
    try {
      cgroup_ = std::make_unique<AttemptCgroup>(cgroups, launch_.attempt_id, limits);
    } catch (const std::exception& e) {
      ::close(log_fd);
      fail_to_start(std::string("cannot make the attempt's cgroup: ") + e.what());
      return;
    }
  } else if (memory_limit_mb_ > 0) {
    spdlog::warn("event=memory_limit_not_enforced job={} attempt={} memory_mb={} reason=\"{}\"", launch_.job_id,
                 launch_.attempt_id, memory_limit_mb_, cgroups.describe());
  }
  // Everything the child needs is built before it starts: it shares our memory and only makes system calls.
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : plan.environment) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = plan.argv;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  SpawnPlan spawn{argv.data(), envp.data(), log_fd, attempt_dir.c_str(), account_ ? &*account_ : nullptr};
  spawn.channel_fd = plan.channel_fd;
  if (cgroup_) {
    spawn.cgroup_fds = cgroup_->join_fds().data();
    spawn.cgroup_fd_count = cgroup_->join_fds().size();
  }
  const pid_t pid = spawn_process(spawn);
  ::close(log_fd);
  if (cgroup_) cgroup_->close_join_fds();
  if (pid < 0) {
    fail_to_start(std::string("cannot create the process: ") + std::strerror(-pid));
    return;
  }
  pid_ = pid;
  ::setpgid(pid_, pid_);  // also in the parent, so killpg works even before the child ran
  processes_.record(pid_, launch_.attempt_id);
  spdlog::info("event=process_started attempt={} rank={} pid={} argv0={}", launch_.attempt_id, launch_.rank, pid_,
               plan.argv[0]);
  watch_exit();
}

int RankProcess::prepare_files(const std::string& attempt_dir) {
  std::optional<checkpoint::DirOwner> owner;
  if (account_) owner = checkpoint::DirOwner{account_->uid, account_->gid};
  // The attempt directory is new (the agent's attempts/ is its own), and a symlink planted in its place
  // was refused at launch (agent/launch_paths.h).
  if (::mkdir(attempt_dir.c_str(), 0700) != 0) {
    if (errno != EEXIST) throw std::runtime_error("cannot create " + attempt_dir + ": " + std::strerror(errno));
    // One left by an earlier life of the agent is the job's, or ours; another account's is not
    // given to the job with whatever that account put in it.
    struct stat st {};
    if (owner && ::lstat(attempt_dir.c_str(), &st) == 0 && st.st_uid != owner->uid && st.st_uid != ::geteuid()) {
      throw std::runtime_error(attempt_dir + " already exists and belongs to uid " + std::to_string(st.st_uid) +
                               ", not to the job's account (uid " + std::to_string(owner->uid) + ")");
    }
  }
  if (owner && ::lchown(attempt_dir.c_str(), owner->uid, owner->gid) != 0) {
    throw std::runtime_error("cannot give " + attempt_dir + " to " + account_->name + ": " + std::strerror(errno));
  }
  if (!launch_.checkpoint_dir.empty()) checkpoint::create_checkpoint_dir(launch_.checkpoint_dir, owner);
  const int log_fd = ::open(log_path_.c_str(), O_CREAT | O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (log_fd < 0) throw std::runtime_error("cannot open log file " + log_path_ + ": " + std::strerror(errno));
  if (owner && ::fchown(log_fd, owner->uid, owner->gid) != 0) {
    ::close(log_fd);
    throw std::runtime_error("cannot give " + log_path_ + " to " + account_->name + ": " + std::strerror(errno));
  }
  return log_fd;
}

void RankProcess::fail_to_start(const std::string& reason) {
  spdlog::error("event=process_not_started attempt={} rank={} reason=\"{}\"", launch_.attempt_id, launch_.rank, reason);
  ProcessEnd end;
  end.exit_code = 127;
  end.status = reason;
  boost::asio::post(io_, [this, end] { on_end_(end); });
  exited_ = true;
}

RankProcess::~RankProcess() {
  if (pid_ <= 0 || exited_) return;
  kill_everything();
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  processes_.forget(pid_);
}

void RankProcess::watch_exit() {
  const int pidfd = open_pidfd(pid_);
  if (pidfd < 0) {
    // Without a pidfd (a kernel before 5.3) the exit cannot be watched without blocking: stop the
    // process, whose reaping is then quick, and say why.
    spdlog::error("event=process_not_watchable attempt={} rank={} error=\"{}\"", launch_.attempt_id, launch_.rank,
                  std::strerror(-pidfd));
    stop_reason_ = "the agent cannot watch the process (pidfd_open failed)";
    ::killpg(pid_, SIGKILL);
    boost::asio::post(io_, [this] { reap(); });
    return;
  }
  exit_watch_.assign(pidfd);
  exit_watch_.async_wait(boost::asio::posix::stream_descriptor::wait_read, [this](const boost::system::error_code& ec) {
    if (ec == boost::asio::error::operation_aborted) return;  // the process is being destroyed
    reap();
  });
}

// A pidfd is readable once the process has exited; the waitpid does not block.
void RankProcess::reap() {
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  // Children the rank left behind, in its cgroup or process group, do not outlive it.
  kill_everything();
  exited_ = true;
  exit_watch_.close();
  processes_.forget(pid_);
  finish(status);
}

void RankProcess::finish(int status) {
  ProcessEnd end;
  if (WIFEXITED(status)) {
    end.exit_code = WEXITSTATUS(status);
    end.status = "exited with code " + std::to_string(*end.exit_code);
  } else if (WIFSIGNALED(status)) {
    end.signal = WTERMSIG(status);
    end.status = std::string("killed by signal ") + std::to_string(*end.signal) + " (" + strsignal(*end.signal) + ")";
  }
  end.stop_reason = stop_reason_;
  end.oom = end_cgroup();
  on_end_(std::move(end));
}

void RankProcess::signal_group(int signal) {
  if (pid_ > 0 && !exited_) ::killpg(pid_, signal);
}

void RankProcess::terminate(const std::string& reason) {
  if (stop_reason_.empty()) stop_reason_ = reason;
  signal_group(SIGTERM);
}

void RankProcess::save_then_stop(const std::string& reason) {
  if (stop_reason_.empty()) stop_reason_ = reason;
  signal_group(SIGUSR1);
}

void RankProcess::kill() {
  if (pid_ > 0 && !exited_) kill_everything();
}

void RankProcess::kill_everything() {
  ::killpg(pid_, SIGKILL);
  if (cgroup_ && !cgroup_->kill_all()) {
    spdlog::warn("event=cgroup_not_emptied job={} attempt={}", launch_.job_id, launch_.attempt_id);
  }
}

std::string RankProcess::end_cgroup() {
  if (!cgroup_) return "";
  const CgroupUsage usage = cgroup_->usage();
  cgroup_.reset();
  const std::int64_t peak_mb = usage.peak_memory_bytes.value_or(0) / (1024 * 1024);
  spdlog::info("event=attempt_cgroup_removed job={} attempt={} peak_memory_mb={} oom_kills={}", launch_.job_id,
               launch_.attempt_id, usage.peak_memory_bytes ? std::to_string(peak_mb) : "unknown", usage.oom_kills);
  if (usage.oom_kills == 0) return "";
  const std::string limit =
      memory_limit_mb_ > 0 ? " at " + memory_limit_origin_ + " of " + std::to_string(memory_limit_mb_) + " MiB" : "";
  return "out of memory: the kernel's OOM killer killed " + std::to_string(usage.oom_kills) +
         (usage.oom_kills == 1 ? " process" : " processes") + limit + " (peak " + std::to_string(peak_mb) + " MiB)";
}

}  // namespace trainyard::agent
