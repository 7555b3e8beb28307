#include "agent/rank_process.h"

#include "agent/process_snapshot.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "agent/descriptor_passing.h"
#include "agent/launch_failure.h"
#include "agent/private_tmp.h"
#include "agent/process_spawn.h"
#include "checkpoint/checkpoint.h"
#include "proto/exit_reasons.h"

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
      on_end_(std::move(on_end)) {
  int log_fd = -1;
  try {
    log_fd = prepare_files(attempt_dir);
    if (plan.script) script_path_ = write_script(attempt_dir, *plan.script);
  } catch (const std::exception& e) {
    if (log_fd >= 0) ::close(log_fd);
    // The node's files in the attempt's way (another account's directory, a log already there) are
    // the node's problem, not the job's: "node files: " makes it infrastructure (daemon/base/failure_rules.cpp).
    fail_to_start(std::string("node files: ") + e.what());
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
  if (launch_.job_network) {
    try {
      if (!plan.network_host) throw std::runtime_error("this agent was not set up to make attempts' networks");
      network_ = std::make_unique<JobNetwork>(*plan.network_host, *launch_.job_network, launch_.rank, launch_.peers);
      spdlog::info("event=job_network_made job={} attempt={} rank={} address={} block={}", launch_.job_id,
                   launch_.attempt_id, launch_.rank, ipv4_text(launch_.job_network->addresses[static_cast<std::size_t>(launch_.rank)]),
                   launch_.job_network->block.text());
    } catch (const std::exception& e) {
      ::close(log_fd);
      // The node's doing, not the job's (daemon/base/failure_rules.cpp): retried elsewhere.
      fail_to_start(std::string("node network: cannot give the attempt its own network: ") + e.what());
      return;
    }
  }
  if (::geteuid() == 0) start_private_tmp(attempt_dir, plan);
  locals_.resize(plan.environments.size());
  CopyPlumbing copies = plumb_copies(plan);
  bool started = true;
  for (std::size_t i = 0; i < locals_.size() && started; ++i) started = start_local(i, plan, attempt_dir, log_fd, copies);
  start_copies(plan, copies, log_fd);
  ::close(log_fd);
  if (cgroup_) cgroup_->close_join_fds();
  if (running_ == 0) {
    fail_to_start(stop_reason_);
    return;
  }
  if (!started) kill_everything();  // a gang short of a process cannot run; the reaping ends the rank
  for (std::size_t i = 0; i < locals_.size(); ++i) {
    if (locals_[i].pid > 0) watch_exit(i);
  }
}

void RankProcess::start_private_tmp(const std::string& attempt_dir, const RankProcessPlan& plan) {
  // What the attempt's processes must reach, which their own /tmp would hide.
  std::vector<std::string> needed{attempt_dir};
  if (plan.workdir) needed.push_back(*plan.workdir);
  for (const auto& environment : plan.environments) {
    if (const auto checkpoints = environment.find("TRAINYARD_CHECKPOINT_DIR"); checkpoints != environment.end()) {
      needed.push_back(checkpoints->second);
    }
  }
  std::string reason;
  if (const std::string hidden = path_in_private_dirs(needed); !hidden.empty()) {
    reason = "the attempt needs " + hidden + ", which a private /tmp or /dev/shm would hide";
  } else {
    try {
      private_tmp_ = std::make_unique<PrivateTmp>(memory_limit_mb_);
      if (!private_tmp_->proc_error().empty()) {
        spdlog::warn("event=private_proc_unavailable job={} attempt={} reason=\"{}\"", launch_.job_id,
                     launch_.attempt_id, private_tmp_->proc_error());
      }
    } catch (const std::exception& e) {
      reason = e.what();  // a host where even root cannot mount (a container without CAP_SYS_ADMIN)
    }
  }
  if (!reason.empty()) {
    // The host's pair, emptied of the attempt's files at its end (end_private_tmp).
    spdlog::warn("event=private_tmp_unavailable job={} attempt={} reason=\"{}\"", launch_.job_id, launch_.attempt_id,
                 reason);
  }
}

bool RankProcess::start_local(std::size_t index, const RankProcessPlan& plan, const std::string& attempt_dir, int log_fd,
                              const CopyPlumbing& copies) {
  // Everything the child needs is built before it starts: it shares our memory and only makes system calls.
  const std::map<std::string, std::string>& environment = plan.environments[index];
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : environment) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = plan.argv;
  if (!script_path_.empty()) args.front() = script_path_;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  SpawnPlan spawn{argv.data(), envp.data(), copies.output[1] >= 0 ? copies.output[1] : log_fd, attempt_dir.c_str(),
                  account_ ? &*account_ : nullptr};
  spawn.error_fd = copies.error[1];
  if (index == 0 && copies.socket[1] >= 0) {
    spawn.output_copy = plan.output_copy ? plan.output_copy->c_str() : nullptr;
    spawn.error_copy = plan.error_copy ? plan.error_copy->c_str() : nullptr;
    spawn.copy_socket = copies.socket[1];
    spawn.copies_append = plan.copies_append;
  }
  const auto path = environment.find("PATH");
  if (path != environment.end()) spawn.search_path = path->second.c_str();
  spawn.workdir = plan.workdir ? plan.workdir->c_str() : nullptr;
  spawn.channel_fd = plan.channel_fd;
  if (private_tmp_) spawn.mount_namespace_fd = private_tmp_->mount_namespace();
  if (network_) spawn.net_namespace_fd = network_->net_namespace();
  if (cgroup_) {
    spawn.cgroup_fds = cgroup_->join_fds().data();
    spawn.cgroup_fd_count = cgroup_->join_fds().size();
  }
  SpawnFailure failure;
  const pid_t pid = spawn_process(spawn, failure);
  if (pid < 0) {
    stop_reason_ = std::string("cannot create the process: ") + std::strerror(-pid);
    return false;
  }
  LocalProcess& local = locals_[index];
  local.pid = pid;
  ++running_;
  ::setpgid(pid, pid);  // also in the parent, so killpg works even before the child ran
  processes_.record(pid, launch_.attempt_id);
  if (failure.stage != SpawnStage::none) {
    local.launch_failure = describe_launch_failure(
        failure, LaunchContext{plan.argv[0], path == environment.end() ? "" : path->second,
                               plan.workdir.value_or(attempt_dir), plan.workdir, account_ ? &*account_ : nullptr,
                               plan.output_copy.value_or(""), plan.error_copy.value_or("")});
    const std::string line = "trainyard-agent: " + local.launch_failure + "\n";
    (void)!::write(log_fd, line.data(), line.size());
    spdlog::warn("event=launch_failed job={} attempt={} rank={} local={} reason=\"{}\"", launch_.job_id,
                 launch_.attempt_id, launch_.rank, index, local.launch_failure);
    return true;  // the child has exited: its reaping ends the gang
  }
  spdlog::info("event=process_started attempt={} rank={} local={} pid={} argv0={}", launch_.attempt_id, launch_.rank,
               index, pid, plan.argv[0]);
  return true;
}

void RankProcess::CopyPlumbing::close_child_ends() {
  for (int* fd : {&output[1], &error[1], &socket[1]}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void RankProcess::CopyPlumbing::close_all() {
  close_child_ends();
  for (int* fd : {&output[0], &error[0], &socket[0]}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

RankProcess::CopyPlumbing RankProcess::plumb_copies(const RankProcessPlan& plan) {
  CopyPlumbing copies;
  if (!plan.output_copy && !plan.error_copy) return copies;
  const bool made = (!plan.output_copy || ::pipe2(copies.output, O_CLOEXEC) == 0) &&
                    (!plan.error_copy || ::pipe2(copies.error, O_CLOEXEC) == 0) &&
                    ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, copies.socket) == 0;
  if (!made) {
    // Out of descriptors: the job runs with its output in the log only, which says why.
    spdlog::error("event=output_copy_unavailable error=\"{}\"", std::strerror(errno));
    copies.close_all();
  }
  return copies;
}

void RankProcess::start_copies(const RankProcessPlan& plan, CopyPlumbing& copies, int log_fd) {
  if (copies.socket[0] < 0) {
    if (plan.output_copy || plan.error_copy) {
      const std::string line = "trainyard-agent: the node could not copy this output to --output/--error files\n";
      (void)!::write(log_fd, line.data(), line.size());
    }
    return;
  }
  copies.close_child_ends();  // the processes hold theirs: the pipes end when the last of them goes
  // Sent before the child's exec, which spawn_process waited for; nothing when it could not open them.
  int files[kMaxPassedDescriptors] = {-1, -1};
  (void)receive_descriptors(copies.socket[0], files);
  std::vector<OutputCopy::Stream> streams;
  int next_file = 0;
  if (copies.output[0] >= 0) streams.push_back({copies.output[0], files[next_file++], *plan.output_copy});
  if (copies.error[0] >= 0) streams.push_back({copies.error[0], files[next_file++], *plan.error_copy});
  ::close(copies.socket[0]);
  copies = CopyPlumbing{};  // the read ends are the copy's now
  output_copy_ = std::make_shared<OutputCopy>(
      io_, ::fcntl(log_fd, F_DUPFD_CLOEXEC, 0), std::move(streams),
      fmt::format("job={} attempt={} rank={}", launch_.job_id, launch_.attempt_id, launch_.rank));
  output_copy_->start();
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
  // A new file: a log already there is another attempt's, never to be appended to.
  const int log_fd = ::open(log_path_.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (log_fd < 0) throw std::runtime_error("cannot create the log file " + log_path_ + ": " + std::strerror(errno));
  if (owner && ::fchown(log_fd, owner->uid, owner->gid) != 0) {
    ::close(log_fd);
    throw std::runtime_error("cannot give " + log_path_ + " to " + account_->name + ": " + std::strerror(errno));
  }
  return log_fd;
}

std::string RankProcess::write_script(const std::string& attempt_dir, const std::string& text) {
  const std::string path = attempt_dir + "/rank-" + std::to_string(launch_.rank) + ".batch-script";
  // Read and run by the job's account only; a file already there is not the job's to trust.
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0500);
  if (fd < 0) throw std::runtime_error("cannot create the batch script " + path + ": " + std::strerror(errno));
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                       (!account_ || ::fchown(fd, account_->uid, account_->gid) == 0);
  const int error = errno;
  ::close(fd);
  if (!written) throw std::runtime_error("cannot write the batch script " + path + ": " + std::strerror(error));
  return path;
}

void RankProcess::fail_to_start(const std::string& reason) {
  spdlog::error("event=process_not_started attempt={} rank={} reason=\"{}\"", launch_.attempt_id, launch_.rank, reason);
  ProcessEnd end;
  end.exit_code = 127;
  end.status = reason;
  boost::asio::post(io_, [this, end] { on_end_(end); });
  exited_ = true;
  private_tmp_.reset();  // no process of the attempt runs in it
  network_.reset();
}

RankProcess::~RankProcess() {
  if (output_copy_) output_copy_->stop();
  if (exited_ || running_ == 0) return;
  kill_everything();
  for (LocalProcess& local : locals_) {
    if (local.pid <= 0 || local.status) continue;
    int status = 0;
    while (::waitpid(local.pid, &status, 0) < 0 && errno == EINTR) {
    }
    processes_.forget(local.pid);
  }
}

void RankProcess::watch_exit(std::size_t index) {
  LocalProcess& local = locals_[index];
  const int pidfd = open_pidfd(local.pid);
  if (pidfd < 0) {
    // Without a pidfd (a kernel before 5.3) the exit cannot be watched without blocking: stop the
    // process, whose reaping is then quick, and say why.
    spdlog::error("event=process_not_watchable attempt={} rank={} error=\"{}\"", launch_.attempt_id, launch_.rank,
                  std::strerror(-pidfd));
    stop_reason_ = "the agent cannot watch the process (pidfd_open failed)";
    ::killpg(local.pid, SIGKILL);
    boost::asio::post(io_, [this, index] { reap(index); });
    return;
  }
  local.exit_watch = std::make_unique<boost::asio::posix::stream_descriptor>(io_, pidfd);
  local.exit_watch->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                               [this, index](const boost::system::error_code& ec) {
                                 if (ec == boost::asio::error::operation_aborted) return;  // being destroyed
                                 reap(index);
                               });
}

// A pidfd is readable once the process has exited; the waitpid does not block.
void RankProcess::reap(std::size_t index) {
  LocalProcess& local = locals_[index];
  int status = 0;
  while (::waitpid(local.pid, &status, 0) < 0 && errno == EINTR) {
  }
  local.status = status;
  if (local.exit_watch) local.exit_watch->close();
  processes_.forget(local.pid);
  --running_;
  const bool failed = !local.launch_failure.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  if (failed && !first_failed_) first_failed_ = index;
  ::killpg(local.pid, SIGKILL);  // what it left in its own group
  if (running_ > 0 && !failed) return;
  // Children the rank left behind, in its cgroup or process groups, do not outlive it; and a failed
  // process takes its gang with it.
  kill_everything();
  if (running_ > 0) return;
  exited_ = true;
  finish();
}

void RankProcess::finish() {
  if (output_copy_) {
    output_copy_->drain();  // before the exit's log tail is read
    output_copy_->stop();
  }
  const std::size_t index = first_failed_.value_or(0);
  const LocalProcess& local = locals_[index];
  const int status = *local.status;
  ProcessEnd end;
  if (WIFEXITED(status)) {
    end.exit_code = WEXITSTATUS(status);
    end.status = "exited with code " + std::to_string(*end.exit_code);
  } else if (WIFSIGNALED(status)) {
    end.signal = WTERMSIG(status);
    end.status = std::string("killed by signal ") + std::to_string(*end.signal) + " (" + strsignal(*end.signal) + ")";
  }
  if (!local.launch_failure.empty()) end.status = local.launch_failure;
  if (locals_.size() > 1) {
    end.status = "local process " + std::to_string(index) + " of " + std::to_string(locals_.size()) + " " + end.status;
  }
  end.stop_reason = stop_reason_;
  end.oom = end_cgroup();
  end_private_tmp();
  network_.reset();
  on_end_(std::move(end));
}

void RankProcess::signal_group(int signal) {
  for (const LocalProcess& local : locals_) {
    if (local.pid > 0 && !local.status) ::killpg(local.pid, signal);
  }
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
  if (!exited_ && running_ > 0) kill_everything();
}

std::vector<pid_t> RankProcess::local_pids() const {
  std::vector<pid_t> pids;
  for (const LocalProcess& local : locals_) pids.push_back(local.pid > 0 && !local.status ? local.pid : -1);
  return pids;
}

std::vector<pid_t> RankProcess::all_pids() const {
  if (cgroup_) return cgroup_->processes();
  std::vector<pid_t> groups = local_pids();
  std::erase(groups, -1);
  return processes_in_groups(groups);
}

void RankProcess::kill_everything() {
  // A reaped process's group was killed at its reaping: its id may belong to someone else by now.
  for (const LocalProcess& local : locals_) {
    if (local.pid > 0 && !local.status) ::killpg(local.pid, SIGKILL);
  }
  if (cgroup_ && !cgroup_->kill_all()) {
    spdlog::warn("event=cgroup_not_emptied job={} attempt={}", launch_.job_id, launch_.attempt_id);
  }
}

void RankProcess::end_private_tmp() {
  if (private_tmp_) {
    private_tmp_.reset();
  } else if (::geteuid() == 0 && account_ && account_->gid_is_the_attempts) {
    remove_files_of_group(account_->gid, {"/tmp", "/dev/shm"});
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
  return std::string(kOomKilledReasonPrefix) + std::to_string(usage.oom_kills) +
         (usage.oom_kills == 1 ? " process" : " processes") + limit + " (peak " + std::to_string(peak_mb) + " MiB)";
}

}  // namespace trainyard::agent
