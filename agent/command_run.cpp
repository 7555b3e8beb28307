#include "agent/command_run.h"

#include "agent/process_spawn.h"
#include "agent/provenance_file.h"
#include "checkpoint/checkpoint.h"
#include "proto/provenance.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

extern char** environ;

namespace trainyard::agent {
namespace {

bool inherited_by_jobs(std::string_view name) {
  if (name.starts_with("LC_")) return true;
  return std::find(kInheritedEnvironment.begin(), kInheritedEnvironment.end(), name) != kInheritedEnvironment.end();
}

// The last whole line of a small file, read without blocking: a job may replace its progress file
// with a FIFO or a link to a device, and the agent's I/O thread must not wait on it.
std::string read_progress_line(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    text.resize(128);
    const ssize_t n = ::read(fd, text.data(), text.size());
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  }
  ::close(fd);
  return text;
}

}  // namespace

std::map<std::string, std::string> command_environment(const LaunchMsg& l, const RankFiles& files,
                                                       char** agent_environment, const JobAccount* account) {
  std::map<std::string, std::string> env;
  for (char** e = agent_environment; *e; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string_view::npos && inherited_by_jobs(entry.substr(0, eq))) {
      env[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
    }
  }
  if (account) {
    env["USER"] = account->name;
    env["LOGNAME"] = account->name;
    env["HOME"] = account->home;
  }
  for (const auto& [k, v] : l.command.env) env[k] = v;
  env["TRAINYARD_JOB_ID"] = std::to_string(l.job_id);
  env["TRAINYARD_ATTEMPT_ID"] = std::to_string(l.attempt_id);
  env["TRAINYARD_ATTEMPT"] = std::to_string(l.attempt_number);
  env["RANK"] = std::to_string(l.rank);
  env["WORLD_SIZE"] = std::to_string(l.world_size);
  env["NODE_RANK"] = std::to_string(l.rank);
  env["LOCAL_RANK"] = "0";
  env["MASTER_ADDR"] = l.master_addr;
  env["MASTER_PORT"] = std::to_string(l.master_port);
  env["TRAINYARD_CORES"] = std::to_string(l.cores);
  env["TRAINYARD_CHECKPOINT_DIR"] = l.checkpoint_dir;
  if (l.resume_from) env["TRAINYARD_RESUME_FROM"] = *l.resume_from;
  env["TRAINYARD_PREEMPT_GRACE_S"] = std::to_string(l.preempt_grace_ms / 1000);
  env["TRAINYARD_PROGRESS_FILE"] = files.progress;
  env["TRAINYARD_PROVENANCE_FILE"] = files.provenance;
  return env;
}

CommandRun::CommandRun(const LaunchMsg& launch, const std::string& attempt_dir, std::optional<JobAccount> account,
                       const Cgroups& cgroups, ProcessRegistry& processes, boost::asio::io_context& io,
                       ExitCallback on_exit)
    : launch_(launch),
      account_(std::move(account)),
      processes_(processes),
      log_path_(attempt_dir + "/rank-" + std::to_string(launch.rank) + ".log"),
      files_{attempt_dir + "/rank-" + std::to_string(launch.rank) + ".progress",
             attempt_dir + "/rank-" + std::to_string(launch.rank) + ".provenance.json"},
      io_(io),
      on_exit_(std::move(on_exit)),
      exit_watch_(io) {
  int log_fd = -1;
  try {
    log_fd = prepare_files(attempt_dir);
  } catch (const std::exception& e) {
    fail_to_start(e.what());
    return;
  }
  if (cgroups.available()) {
    const CgroupLimits limits{launch_.cores, launch_.memory_mb * 1024 * 1024, cgroups.pids_max()};
    try {
      cgroup_ = std::make_unique<AttemptCgroup>(cgroups, launch_.attempt_id, limits);
    } catch (const std::exception& e) {
      ::close(log_fd);
      fail_to_start(std::string("cannot make the attempt's cgroup: ") + e.what());
      return;
    }
  } else if (launch_.memory_mb > 0) {
    spdlog::warn("event=memory_limit_not_enforced job={} attempt={} memory_mb={} reason=\"{}\"", launch_.job_id,
                 launch_.attempt_id, launch_.memory_mb, cgroups.describe());
  }
  // Everything the child needs is built before it starts: it shares our memory and only makes system calls.
  const auto env = command_environment(launch_, files_, environ, account_ ? &*account_ : nullptr);
  environment_ = mask_secrets(env);
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = launch_.command.argv;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  SpawnPlan plan{argv.data(), envp.data(), log_fd, attempt_dir.c_str(), account_ ? &*account_ : nullptr};
  if (cgroup_) {
    plan.cgroup_fds = cgroup_->join_fds().data();
    plan.cgroup_fd_count = cgroup_->join_fds().size();
  }
  const pid_t pid = spawn_process(plan);
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
               launch_.command.argv[0]);
  watch_exit();
}

int CommandRun::prepare_files(const std::string& attempt_dir) {
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

void CommandRun::fail_to_start(const std::string& reason) {
  spdlog::error("event=process_not_started attempt={} rank={} reason=\"{}\"", launch_.attempt_id, launch_.rank, reason);
  boost::asio::post(io_, [this, reason] { on_exit_(AttemptExit{127, std::nullopt, reason, 0, ""}); });
  exited_ = true;
}

CommandRun::~CommandRun() {
  if (pid_ <= 0 || exited_) return;
  // Destroyed before its exit was seen (the agent stopping): everything is killed and the leader
  // reaped here, which a SIGKILL makes quick.
  kill_everything();
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  processes_.forget(pid_);
}

void CommandRun::watch_exit() {
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
    if (ec == boost::asio::error::operation_aborted) return;  // the run is being destroyed
    reap();
  });
}

// A pidfd is readable once the process has exited; the waitpid does not block.
void CommandRun::reap() {
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  // Children the job left behind, in its cgroup or process group, do not outlive it.
  kill_everything();
  exited_ = true;
  exit_watch_.close();
  processes_.forget(pid_);
  finish(status);
}

void CommandRun::finish(int status) {
  AttemptExit exit;
  if (WIFEXITED(status)) {
    exit.exit_code = WEXITSTATUS(status);
    exit.reason = "exited with code " + std::to_string(*exit.exit_code);
  } else if (WIFSIGNALED(status)) {
    exit.signal = WTERMSIG(status);
    exit.reason = std::string("killed by signal ") + std::to_string(*exit.signal) + " (" + strsignal(*exit.signal) + ")";
  }
  if (!stop_reason_.empty()) exit.reason = stop_reason_ + " (" + exit.reason + ")";
  if (const std::string oom = end_cgroup(); !oom.empty()) exit.reason = oom + "; " + exit.reason;
  report();
  exit.steps = last_step_;
  exit.log_tail = read_exit_tail(log_path_);
  auto [facts, facts_error] = read_user_facts(files_.provenance);
  if (!facts_error.empty()) {
    spdlog::warn("event=provenance_file_refused attempt={} rank={} error=\"{}\"", launch_.attempt_id, launch_.rank,
                 facts_error);
  }
  exit.user_facts = std::move(facts);
  exit.user_facts_error = std::move(facts_error);
  on_exit_(std::move(exit));
}

void CommandRun::terminate(const std::string& reason) {
  if (stop_reason_.empty()) stop_reason_ = reason;
  if (pid_ > 0 && !exited_) ::killpg(pid_, SIGTERM);
}

void CommandRun::kill() {
  if (pid_ > 0 && !exited_) kill_everything();
}

void CommandRun::kill_everything() {
  ::killpg(pid_, SIGKILL);
  if (cgroup_ && !cgroup_->kill_all()) {
    spdlog::warn("event=cgroup_not_emptied job={} attempt={}", launch_.job_id, launch_.attempt_id);
  }
}

std::string CommandRun::end_cgroup() {
  if (!cgroup_) return "";
  const CgroupUsage usage = cgroup_->usage();
  cgroup_.reset();
  const std::int64_t peak_mb = usage.peak_memory_bytes.value_or(0) / (1024 * 1024);
  spdlog::info("event=attempt_cgroup_removed job={} attempt={} peak_memory_mb={} oom_kills={}", launch_.job_id,
               launch_.attempt_id, usage.peak_memory_bytes ? std::to_string(peak_mb) : "unknown", usage.oom_kills);
  if (usage.oom_kills == 0) return "";
  const std::string limit =
      launch_.memory_mb > 0 ? " at the job's memory_mb of " + std::to_string(launch_.memory_mb) + " MiB" : "";
  return "out of memory: the kernel's OOM killer killed " + std::to_string(usage.oom_kills) +
         (usage.oom_kills == 1 ? " process" : " processes") + limit + " (peak " + std::to_string(peak_mb) + " MiB)";
}

void CommandRun::save_then_stop(const std::string& reason) {
  if (stop_reason_.empty()) stop_reason_ = reason;
  if (pid_ > 0 && !exited_) ::killpg(pid_, SIGUSR1);
}

AttemptReport CommandRun::report() {
  std::istringstream in(read_progress_line(files_.progress));
  std::int64_t step = 0;
  std::string phase;
  if (in >> step) {
    in >> phase;
    if (step > last_step_) {
      last_step_ = step;
      last_progress_at_ = SystemTimeSource().system_now();
      if (!first_step_at_) first_step_at_ = last_progress_at_;
    }
    if (!phase.empty()) phase_ = phase;
  }
  // A command does not say what its checkpoints cost: that time is inside its steps.
  return AttemptReport{launch_.attempt_id, launch_.job_id, last_step_, last_progress_at_, phase_, first_step_at_, 0};
}

}  // namespace trainyard::agent
