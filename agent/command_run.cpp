#include "agent/command_run.h"

#include "agent/provenance_file.h"
#include "proto/provenance.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <sstream>
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
      files_{attempt_dir + "/rank-" + std::to_string(launch.rank) + ".progress",
             attempt_dir + "/rank-" + std::to_string(launch.rank) + ".provenance.json"},
      on_exit_(std::move(on_exit)) {
  RankProcessPlan plan;
  plan.argv = launch_.command.argv;
  plan.environment = command_environment(launch_, files_, environ, account ? &*account : nullptr);
  plan.memory_limit_mb = launch_.memory_mb;
  environment_ = mask_secrets(plan.environment);
  if (launch_.rank == 0 && !launch_.checkpoint_dir.empty()) {
    checkpoints_.emplace(launch_.checkpoint_dir,
                         account && account->gid_is_the_attempts ? std::optional(account->gid) : std::nullopt);
  }
  process_ = std::make_unique<RankProcess>(launch_, attempt_dir, std::move(account), cgroups, processes, io, plan,
                                           [this](ProcessEnd end) { finish(end); });
}

void CommandRun::finish(const ProcessEnd& end) {
  AttemptExit exit;
  exit.exit_code = end.exit_code;
  exit.signal = end.signal;
  exit.reason = end.reason(end.status);
  report();
  exit.steps = last_step_;
  exit.log_tail = read_exit_tail(process_->log_path());
  auto [facts, facts_error] = read_user_facts(files_.provenance);
  if (!facts_error.empty()) {
    spdlog::warn("event=provenance_file_refused attempt={} rank={} error=\"{}\"", launch_.attempt_id, launch_.rank,
                 facts_error);
  }
  exit.user_facts = std::move(facts);
  exit.user_facts_error = std::move(facts_error);
  on_exit_(std::move(exit));
}

std::vector<CheckpointReport> CommandRun::take_checkpoints() {
  return checkpoints_ ? checkpoints_->take_new() : std::vector<CheckpointReport>();
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
