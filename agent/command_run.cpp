#include "agent/command_run.h"

#include "agent/job_network.h"
#include "agent/provenance_file.h"
#include "agent/python_stacks.h"
#include "checkpoint/checkpoint.h"
#include "proto/output_path.h"
#include "proto/provenance.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <utility>
#include <map>
#include <spdlog/spdlog.h>

extern char** environ;

namespace trainyard::agent {
namespace {

bool inherited_by_jobs(std::string_view name) {
  if (name.starts_with("LC_")) return true;
  return std::find(kInheritedEnvironment.begin(), kInheritedEnvironment.end(), name) != kInheritedEnvironment.end();
}

// Slurm's %A and %a: the array and the task index the daemon gave the launch, if it is a task.
void array_facts(const LaunchMsg& l, OutputPathFacts& facts) {
  const auto job = l.command.env.find("TRAINYARD_ARRAY_JOB_ID");
  const auto task = l.command.env.find("TRAINYARD_ARRAY_TASK_ID");
  if (job == l.command.env.end() || task == l.command.env.end()) return;
  std::int64_t array_job = 0;
  int index = 0;
  const auto parsed = [](const std::string& text, auto& into) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), into);
    return error == std::errc() && end == text.data() + text.size();
  };
  if (parsed(job->second, array_job) && parsed(task->second, index)) {
    facts.array_job = array_job;
    facts.array_task = index;
  }
}

}  // namespace

std::optional<std::string> output_copy_path(const std::optional<std::string>& pattern, const LaunchMsg& l) {
  if (!pattern || (l.rank != 0 && !output_per_node(*pattern))) return std::nullopt;
  OutputPathFacts facts{l.job_id, l.job_name, l.user, l.node, l.rank, std::nullopt, 0};
  array_facts(l, facts);
  return expand_output_path(*pattern, facts);
}

CoreShare core_share(int cores, int procs, int local_rank) {
  if (cores < procs) return {local_rank % std::max(cores, 1), 1};
  const int base = cores / procs;
  const int extra = cores % procs;
  return {local_rank * base + std::min(local_rank, extra), base + (local_rank < extra ? 1 : 0)};
}

RankFiles rank_files(const std::string& attempt_dir, int global_rank) {
  const std::string stem = attempt_dir + "/rank-" + std::to_string(global_rank);
  return {stem + ".progress", stem + ".provenance.json", stem + ".stacks"};
}

std::map<std::string, std::string> command_environment(const LaunchMsg& l, const RankFiles& files,
                                                       char** agent_environment, const JobAccount* account,
                                                       int local_rank, const std::string& python_dir) {
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
  env["PATH"] = kJobPath;
  // A Python rank that crashes in native code (SIGSEGV, SIGABRT, ...) prints every thread's stack.
  env["PYTHONFAULTHANDLER"] = "1";
  for (const auto& [k, v] : l.command.env) env[k] = v;
  env["TRAINYARD_JOB_ID"] = std::to_string(l.job_id);
  env["TRAINYARD_ATTEMPT_ID"] = std::to_string(l.attempt_id);
  env["TRAINYARD_ATTEMPT"] = std::to_string(l.attempt_number);
  const int procs = l.command.procs_per_node;
  const std::string rank = std::to_string(l.rank * procs + local_rank);
  const std::string world_size = std::to_string(l.world_size * procs);
  env["RANK"] = rank;
  env["WORLD_SIZE"] = world_size;
  env["LOCAL_RANK"] = std::to_string(local_rank);
  env["LOCAL_WORLD_SIZE"] = std::to_string(procs);
  // torchrun's names for the node's place among the nodes and for the rank within its role.
  for (const char* name : {"NODE_RANK", "GROUP_RANK"}) env[name] = std::to_string(l.rank);
  env["GROUP_WORLD_SIZE"] = std::to_string(l.world_size);
  env["ROLE_RANK"] = rank;
  env["ROLE_WORLD_SIZE"] = world_size;
  env["TRAINYARD_NODES"] = std::to_string(l.world_size);
  env["MASTER_ADDR"] = l.master_addr;
  env["MASTER_PORT"] = std::to_string(l.master_port);
  if (l.job_network) {
    // The rank's address in the attempt's own network (agent/job_network.h). Gloo and NCCL would
    // otherwise pick the address the host's name resolves to, which the namespace does not have.
    env["TRAINYARD_JOB_ADDR"] = ipv4_text(l.job_network->addresses[static_cast<std::size_t>(l.rank)]);
    for (const char* name : {"GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"}) {
      if (!l.command.env.contains(name)) env[name] = JobNetwork::kInterface;
    }
  }
  const CoreShare share = core_share(l.cores, procs, local_rank);
  env["TRAINYARD_CORES"] = std::to_string(share.count);
  const std::string visible = std::to_string(share.first) + "-" + std::to_string(share.first + share.count - 1);
  env["TRAINYARD_VISIBLE_CORES"] = visible;
  if (!l.command.env.contains("NEURON_RT_VISIBLE_CORES")) env["NEURON_RT_VISIBLE_CORES"] = visible;
  env["TRAINYARD_CHECKPOINT_DIR"] = l.checkpoint_dir;
  if (l.resume_from) env["TRAINYARD_RESUME_FROM"] = *l.resume_from;
  env["TRAINYARD_PREEMPT_GRACE_S"] = std::to_string(l.preempt_grace_ms / 1000);
  env["TRAINYARD_PROGRESS_FILE"] = files.progress;
  env["TRAINYARD_PROVENANCE_FILE"] = files.provenance;
  env["TRAINYARD_STACKS_FILE"] = files.stacks;
  env["TRAINYARD_STACKS_SIGNAL"] = std::to_string(stacks_signal());
  if (!python_dir.empty()) {
    const auto own = l.command.env.find("PYTHONPATH");
    env["PYTHONPATH"] = own == l.command.env.end() || own->second.empty() ? python_dir : python_dir + ":" + own->second;
  }
  return env;
}

CommandRun::CommandRun(const LaunchMsg& launch, const std::string& attempt_dir, const std::string& python_dir,
                       std::optional<JobAccount> account, const Cgroups& cgroups, const JobNetworkHost* network_host,
                       ProcessRegistry& processes, boost::asio::io_context& io, ExitCallback on_exit)
    : launch_(launch), on_exit_(std::move(on_exit)), activity_(stacks_signal()) {
  RankProcessPlan plan;
  plan.argv = launch_.command.argv;
  plan.script = launch_.command.script;
  plan.workdir = launch_.command.workdir;
  const int procs = launch_.command.procs_per_node;
  for (int local = 0; local < procs; ++local) {
    files_.push_back(rank_files(attempt_dir, launch_.rank * procs + local));
    plan.environments.push_back(
        command_environment(launch_, files_.back(), environ, account ? &*account : nullptr, local, python_dir));
  }
  progress_.resize(files_.size());
  for (const auto& files : files_) progress_files_.emplace_back(files.progress);
  plan.memory_limit_mb = launch_.memory_mb;
  plan.network_host = network_host;
  plan.output_copy = output_copy_path(launch_.command.output, launch_);
  plan.error_copy = output_copy_path(launch_.command.error, launch_);
  plan.copies_append = launch_.attempt_number > 1;
  environment_ = mask_secrets(plan.environments.front());
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
  auto [facts, facts_error] = read_user_facts(files_.front().provenance);
  if (!facts_error.empty()) {
    spdlog::warn("event=provenance_file_refused attempt={} rank={} error=\"{}\"", launch_.attempt_id, launch_.rank,
                 facts_error);
  }
  exit.user_facts = std::move(facts);
  exit.user_facts_error = std::move(facts_error);
  on_exit_(std::move(exit));
}

std::vector<CheckpointReport> CommandRun::take_checkpoints() {
  if (announced_.empty() && !announces_checkpoints_) {
    return checkpoints_ ? checkpoints_->take_new() : std::vector<CheckpointReport>();
  }
  // A job that says when its checkpoints are complete is believed alone: no half-written directory
  // the scan might catch becomes a resume point. Only its own step directories count.
  std::vector<CheckpointReport> reports;
  for (const auto& written : std::exchange(announced_, {})) {
    const std::filesystem::path expected = std::filesystem::path(launch_.checkpoint_dir) / checkpoint::step_dir_name(written.step);
    std::error_code error;
    const auto status = std::filesystem::symlink_status(expected, error);
    if (std::filesystem::path(written.path).lexically_normal() != expected.lexically_normal() || error ||
        !std::filesystem::is_directory(status)) {
      spdlog::warn("event=checkpoint_announcement_refused job={} attempt={} step={} path=\"{}\" expected=\"{}\"",
                   launch_.job_id, launch_.attempt_id, written.step, printable(written.path), expected.string());
      continue;
    }
    reports.push_back({written.step, ""});
  }
  return reports;
}

std::vector<StepMetric> CommandRun::take_metrics() { return std::exchange(metrics_, {}); }

AttemptReport CommandRun::report() {
  // The node's step is its slowest reporting process's: a frozen local process holds it back.
  std::optional<std::size_t> slowest;
  for (std::size_t i = 0; i < files_.size(); ++i) {
    ProgressUpdate update = progress_files_[i].read();
    LocalProgress& local = progress_[i];
    if (update.step) {
      local.step = std::max(local.step, *update.step);
      local.reported = true;
    }
    if (update.phase) local.phase = *update.phase;
    if (update.skipped_lines > 0 && !local.warned_skipped) {
      local.warned_skipped = true;
      spdlog::warn("event=progress_lines_skipped job={} attempt={} rank={} lines={}", launch_.job_id, launch_.attempt_id,
                   launch_.rank, update.skipped_lines);
    }
    if (i != 0) continue;
    // The job's metrics and checkpoints are RANK 0's, its first process on the first node.
    checkpoint_ms_ += update.checkpoint_ms;
    if (launch_.rank != 0) continue;
    for (const StepMetric& metric : update.metrics) {
      if (metric.step <= last_metric_step_) continue;  // a step reported twice, or a rewound counter
      last_metric_step_ = metric.step;
      metrics_.push_back(metric);
    }
    if (!update.checkpoints.empty() && checkpoints_) {
      announces_checkpoints_ = true;
      announced_.insert(announced_.end(), update.checkpoints.begin(), update.checkpoints.end());
    }
  }
  for (std::size_t i = 0; i < progress_.size(); ++i) {
    if (progress_[i].reported && (!slowest || progress_[i].step < progress_[*slowest].step)) slowest = i;
  }
  if (slowest) {
    const LocalProgress& local = progress_[*slowest];
    if (local.step > last_step_) {
      last_step_ = local.step;
      last_progress_at_ = SystemTimeSource().system_now();
      if (!first_step_at_) first_step_at_ = last_progress_at_;
    }
    if (!local.phase.empty()) phase_ = local.phase;
  }
  // What its checkpoint phases took, when it says (the trainyard module's phase("checkpoint")).
  AttemptReport report{launch_.attempt_id, launch_.job_id, last_step_, last_progress_at_, phase_, first_step_at_, checkpoint_ms_};
  look_at_processes(report);
  return report;
}

void CommandRun::look_at_processes(AttemptReport& report) {
  std::vector<RankLeader> leaders;
  const std::vector<pid_t> pids = process_->local_pids();
  const int procs = launch_.command.procs_per_node;
  for (std::size_t i = 0; i < pids.size(); ++i) {
    leaders.push_back({pids[i], launch_.rank * procs + static_cast<int>(i), files_[i].stacks});
  }
  struct stat log {};
  const std::int64_t log_bytes = ::stat(process_->log_path().c_str(), &log) == 0 ? log.st_size : 0;
  activity_.look(SystemTimeSource().monotonic_now(), process_->all_pids(), leaders, log_bytes, report);
}

}  // namespace trainyard::agent
