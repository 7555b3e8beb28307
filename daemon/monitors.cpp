#include "daemon/monitors.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "daemon/canary.h"
#include "daemon/policy/process_where.h"
#include "healthcheck/localisation.h"

namespace trainyard::daemon {

Monitors::Monitors(MonitorConfig config, NodeRegistry& nodes, MonoTime now)
    : config_(config),
      nodes_(nodes),
      started_(now),
      next_group_at_(now),
      next_canary_(now + config.canary_interval) {}

Monitors::Due Monitors::tick(MonoTime now, const std::function<bool()>& canary_running, bool queue_waits) {
  Due due;
  if (config_.periodic_check_interval.count() > 0) {
    if (!rotating_ && rotation_due(now)) {
      rotating_ = true;
      next_group_at_ = now;
    }
    if (rotating_) due.periodic_checks = periodic_checks(now, queue_waits);
  }
  if (config_.canary_interval.count() > 0 && now >= next_canary_) {
    next_canary_ = now + config_.canary_interval;
    due.canary = canary(canary_running());
  }
  return due;
}

Result<JobSpec> Monitors::canary_now(MonoTime now, bool canary_running) {
  if (canary_running) return Error::conflict("a canary job is running already; it ends within a minute");
  std::optional<JobSpec> spec = canary(false);
  if (!spec) return Error::conflict("no node is ready to run a canary: none is connected and accepting work");
  if (config_.canary_interval.count() > 0) next_canary_ = now + config_.canary_interval;
  return std::move(*spec);
}

std::optional<MonoTime> Monitors::next_canary() const {
  if (config_.canary_interval.count() == 0) return std::nullopt;
  return next_canary_;
}

bool Monitors::rotation_due(MonoTime now) const {
  if (now >= started_ + config_.periodic_check_interval) return true;
  if (config_.first_comparison_after.count() == 0 || now < started_ + config_.first_comparison_after) return false;
  std::size_t idle_nodes = 0;
  for (const auto& [name, entry] : nodes_.entries()) {
    if (idle(name, entry) && ++idle_nodes >= kPairTestNodes) return true;
  }
  return false;
}

bool Monitors::idle(const std::string& name, const NodeEntry& entry) const {
  const NodeState state = entry.node.state;
  return entry.channel && state != NodeState::drained && state != NodeState::down && entry.attempts.empty() &&
         !nodes_.under_test(name);
}

std::vector<HealthCheckRequest> Monitors::periodic_checks(MonoTime now, bool queue_waits) {
  std::vector<HealthCheckRequest> due;
  // Periodic checks started earlier hold their nodes until no node of theirs is under test.
  std::erase_if(checking_, [this](const std::vector<std::string>& group) {
    return std::none_of(group.begin(), group.end(), [this](const std::string& n) { return nodes_.under_test(n); });
  });
  // A rotation held back (by the queue, or by the share) catches up by at most one interval.
  next_group_at_ = std::max(next_group_at_, now - config_.periodic_check_interval);
  if (queue_waits || now < next_group_at_) return due;

  std::vector<std::string> names;
  names.reserve(nodes_.entries().size());
  std::size_t idle_nodes = 0;
  for (const auto& [name, entry] : nodes_.entries()) {
    names.push_back(name);
    if (idle(name, entry)) ++idle_nodes;
  }
  const std::vector<std::vector<std::string>> groups = healthcheck::split_into_groups(names, config_.group_size);
  if (groups.empty()) return due;
  std::size_t checking = 0;
  for (const auto& group : checking_) checking += group.size();
  // The share counts the idle nodes with those under periodic checks: both are what is not working.
  const auto share = static_cast<std::size_t>(config_.max_checking_share * static_cast<double>(idle_nodes + checking));
  const std::size_t budget = std::max(share, config_.group_size);
  const Millis spacing = std::max(Millis(1), config_.periodic_check_interval / static_cast<std::int64_t>(groups.size()));
  for (std::size_t looked = 0; looked < groups.size() && now >= next_group_at_; ++looked) {
    const std::vector<std::string>& group = groups[next_group_ % groups.size()];
    std::vector<std::string> members;
    for (const std::string& name : group) {
      if (idle(name, *nodes_.find(name))) members.push_back(name);
    }
    if (!members.empty() && checking > 0 && checking + members.size() > budget) break;  // waits for a share
    next_group_ = (next_group_ + 1) % groups.size();
    next_group_at_ += spacing;
    if (members.empty()) continue;  // all busy or out of service: tested when next due
    checking += members.size();
    checking_.push_back(members);
    const bool collective = members.size() >= 2;
    due.push_back(HealthCheckRequest{HealthCheckKind::periodic, std::move(members), true, collective, "daemon"});
  }
  return due;
}

std::optional<JobSpec> Monitors::canary(bool canary_running) const {
  const auto ready = std::count_if(nodes_.entries().begin(), nodes_.entries().end(), [](const auto& kv) {
    return kv.second.channel && accepts_work(kv.second.node.state);
  });
  if (canary_running || ready == 0) {
    spdlog::info("event=canary_skipped running={} ready_nodes={}", canary_running, ready);
    return std::nullopt;
  }
  return canary_spec(static_cast<int>(std::min<std::int64_t>(config_.canary_nodes, ready)));
}

namespace {

// A rank judged on idleness whose output's pace is not learned yet (at the default 5 s heartbeat, a
// hang in the first 25 s of output) still gets the floor when where it is shows a hang: a stopped
// process, or a Python stack in its own code while another rank waits on it in a collective.
// Anything else gets the pace's allowance, unlearned or not.
Allowance idle_allowance(const RankState& rank, const std::vector<RankState>& ranks) {
  if (rank.output_pace.learned("")) return rank.output_pace.allowance("");
  const WhereVerdict verdict = judge_where(rank.where);
  const bool waited_on = std::any_of(ranks.begin(), ranks.end(), [&](const RankState& other) {
    return &other != &rank && !other.exited && judge_where(other.where) == WhereVerdict::waiting_on_peers;
  });
  if (verdict == WhereVerdict::stopped) return {kHangFloor, "its output's pace not yet learned, but a process of it is stopped: 30s"};
  if (verdict == WhereVerdict::hung_itself && waited_on) {
    return {kHangFloor, "its output's pace not yet learned, but it idles in its own code while others wait on it: 30s"};
  }
  return rank.output_pace.allowance("");
}

}  // namespace

std::optional<StuckDiagnosis> Monitors::stuck(const Job& job, const Attempt& attempt, const std::vector<RankState>& ranks,
                                              MonoTime now) {
  // The kernel always reports steps; a command job opts in by reporting one (its progress file).
  // A command job that reports none is judged on its ranks' idleness.
  const bool reports_progress = job.spec.kind == JobKind::simulated ||
                                std::any_of(ranks.begin(), ranks.end(), [](const RankState& r) { return r.progress_step > 0; });
  std::vector<RankProgress> progress;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankState& rank = ranks[r];
    if (rank.exited) continue;
    RankProgress judged{static_cast<int>(r), attempt.nodes[r], rank.progress_step, rank.phase, Millis(0), {}, false, rank.where};
    if (reports_progress) {
      if (job.spec.kind == JobKind::command && rank.progress_step == 0) continue;
      judged.silent = std::chrono::duration_cast<Millis>(now - rank.progress_at);
      judged.allowance = job.spec.stuck_after_s ? explicit_allowance(*job.spec.stuck_after_s) : rank.pace.allowance(rank.phase);
    } else {
      // A rank that never printed has no pace to learn from: only the job's stuck_after_s judges it.
      if (!rank.active_at || (rank.log_bytes == 0 && !job.spec.stuck_after_s)) continue;
      judged.judged_on_idleness = true;
      judged.silent = std::chrono::duration_cast<Millis>(now - *rank.active_at);
      judged.allowance = job.spec.stuck_after_s ? explicit_allowance(*job.spec.stuck_after_s)
                                                : idle_allowance(rank, ranks);
    }
    progress.push_back(std::move(judged));
  }
  return diagnose_stuck(progress);
}

std::optional<HealthCheckRequest> Monitors::stuck_nodes_check(const Job& job, const Attempt& attempt,
                                                              const std::vector<int>& stuck_ranks) const {
  std::vector<std::string> nodes;
  for (int r : stuck_ranks) {
    const std::string& node = attempt.nodes[static_cast<std::size_t>(r)];
    // A node that is gone is lost, not tested; one already under test gets its verdict there.
    if (!nodes_.connected(node) || nodes_.under_test(node)) continue;
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
  }
  if (nodes.empty()) return std::nullopt;
  const bool collective = nodes.size() >= 2;
  return HealthCheckRequest{HealthCheckKind::after_stuck, std::move(nodes), true, collective, "job " + job_ref_text(job)};
}

std::vector<std::string> Monitors::suspect_canary_nodes(const Job& canary, const Attempt& attempt,
                                                        const std::vector<RankState>& ranks, store::Change& change) {
  // Nodes already out of service keep their state and its way back.
  const bool lost = std::any_of(ranks.begin(), ranks.end(), [](const RankState& r) { return r.lost; });
  const std::string reason = "canary job " + std::to_string(canary.id) + " failed on it (" + attempt.failure_class +
                             "); returns to service after passing its health check";
  std::vector<std::string> suspects;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (lost && !ranks[r].lost) continue;
    const std::string& name = attempt.nodes[r];
    const NodeEntry* entry = nodes_.find(name);
    if (!entry || !entry->channel || entry->node.state != NodeState::healthy) continue;
    nodes_.mark_suspect(name, reason, {{"canary_job", canary.id}}, change);
    spdlog::warn("event=node_state node={} state=SUSPECT canary={} reason=\"{}\"", name, canary.id, reason);
    suspects.push_back(name);
  }
  return suspects;
}

std::optional<HealthCheckRequest> Monitors::canary_check(JobId canary, const std::vector<std::string>& suspects) const {
  std::vector<std::string> to_test;
  for (const auto& node : suspects) {
    // One already under test gets its verdict there.
    if (nodes_.contains(node) && !nodes_.under_test(node)) to_test.push_back(node);
  }
  if (to_test.empty()) return std::nullopt;
  const bool collective = to_test.size() >= 2;
  return HealthCheckRequest{HealthCheckKind::after_canary, std::move(to_test), true, collective,
                            "canary job " + std::to_string(canary)};
}

}  // namespace trainyard::daemon
