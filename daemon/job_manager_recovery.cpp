// The job manager's recovery side (docs/DESIGN.md "Recovery in seconds"; the policy is pure, in recovery.h): a gang
// whose agent went away fails after the disconnect grace rather than the node timeout, or sooner
// when a peer rank saw the node's data-plane connection close, but never before the dead agent's
// attempts are surely stopped: when its fence keeper reports them stopped, else once the time the
// keeper may take has passed; idle nodes are kept warm as spares.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/job_manager.h"
#include "proto/workload_memory.h"

namespace trainyard::daemon {
namespace {

std::string gone_past_the_grace(const std::string& node, Millis grace) {
  return "the agent of node " + node + " disconnected and did not reconnect within " + std::to_string(grace.count()) + " ms";
}

}  // namespace

void JobManager::disconnect_grace_over(const std::string& node, MonoTime disconnected_at) {
  const NodeEntry* entry = nodes_.find(node);
  // Reconnected, or closed again since (a later timer judges that close).
  if (!entry || entry->disconnected_at != disconnected_at) return;
  lose_ranks_of_gone_agent(node);
  // A pre-flight (or any check) waiting on it would hold its attempt's nodes for the task timeout.
  health_.node_gone(node, gone_past_the_grace(node, config_.recovery.disconnect_grace));
}

void JobManager::lose_ranks_of_gone_agent(const std::string& node) {
  const NodeEntry* entry = nodes_.find(node);
  if (!entry) return;
  const MonoTime now = clock_.monotonic_now();
  const std::optional<MonoTime> since = entry->disconnected_at;
  const std::vector<AttemptId> held(entry->attempts.begin(), entry->attempts.end());  // a lost rank may finish its attempt
  for (AttemptId id : held) {
    const auto on = attempts_.rank_on(id, node);
    if (!on || on->attempt->ranks[static_cast<std::size_t>(on->rank)].exited) continue;
    const int rank = on->rank;
    const auto& ranks = on->attempt->ranks;
    const auto saw_close = std::find_if(ranks.begin(), ranks.end(), [rank](const RankState& r) { return r.peer_closed_rank == rank; });
    const bool stopped_by_keeper = ranks[static_cast<std::size_t>(rank)].stopped_by_keeper;
    const std::string stopped = stopped_by_keeper ? "; its fence keeper stopped the attempt's processes" : "";
    switch (node_loss({since, saw_close != ranks.end(), stopped_by_keeper}, now, config_.recovery)) {
      case NodeLoss::none:
        break;
      case NodeLoss::peer_saw_close:
        rank_lost(id, rank, "node_lost: the agent of node " + node + " disconnected and rank " +
                                std::to_string(saw_close - ranks.begin()) + " saw its data-plane connection close" + stopped);
        break;
      case NodeLoss::grace_over:
        rank_lost(id, rank, "node_lost: " + gone_past_the_grace(node, config_.recovery.disconnect_grace) + stopped);
        break;
    }
  }
}

int JobManager::peer_lost_now(const ActiveAttempt& attempt, int reporter) const {
  const std::optional<int> peer = attempt.ranks[static_cast<std::size_t>(reporter)].peer_closed_rank;
  if (!peer || *peer < 0 || *peer >= static_cast<int>(attempt.ranks.size()) ||
      attempt.ranks[static_cast<std::size_t>(*peer)].exited) {
    return -1;
  }
  const NodeEntry* entry = nodes_.find(attempt.record.nodes[static_cast<std::size_t>(*peer)]);
  const bool stopped_by_keeper = attempt.ranks[static_cast<std::size_t>(*peer)].stopped_by_keeper;
  const bool lost = entry && node_loss({entry->disconnected_at, true, stopped_by_keeper}, clock_.monotonic_now(),
                                       config_.recovery) != NodeLoss::none;
  return lost ? *peer : -1;
}

void JobManager::keep_spares_warm() {
  if (config_.recovery.warm_spares <= 0) return;
  // A job waiting to resume on the nodes that survived its attempt counts on them as its own: made
  // a spare (a survivor's check is fresher than the spares'), one would take the place of the
  // spare the resume needs, and the job, which new work's placement never gives spares, would wait
  // for good.
  // Nor is a node such a job left out (a replaced straggler, whose pre-flight is fresher than the
  // spare's check and whose own check has not yet judged it): the resume needs the spare it would displace.
  std::set<std::string_view> kept_out = attempts_.survivor_nodes();
  for (const JobId id : attempts_.resuming_jobs()) {
    if (const auto job = active_jobs_.find(id); job != active_jobs_.end()) {
      kept_out.insert(job->second.excluded_nodes.begin(), job->second.excluded_nodes.end());
    }
  }
  std::vector<SpareCandidate> idle;
  for (const auto& [name, entry] : nodes_.entries()) {
    if (!entry.channel || entry.node.state != NodeState::healthy || !entry.attempts.empty() || entry.low_disk) continue;
    if (kept_out.contains(name)) continue;
    const bool passed = entry.node.last_check_verdict == to_string(NodeState::healthy);
    idle.push_back({name, passed ? entry.node.last_check_at : std::nullopt, nodes_.under_test(name)});
  }
  SparePlan plan = plan_warm_spares(std::move(idle), config_.recovery.warm_spares, clock_.system_now(),
                                    config_.recovery.warm_for);
  nodes_.set_spares(plan.spares);
  if (plan.to_test.empty()) return;
  spdlog::info("event=warm_spares_check spares={} testing={}", join_node_names(plan.spares), join_node_names(plan.to_test));
  const bool collective = plan.to_test.size() >= 2;
  start_check(HealthCheckRequest{HealthCheckKind::warm_spare, std::move(plan.to_test), true, collective, "daemon"}, nullptr);
}

bool JobManager::resume_on_spares(JobId id) {
  const std::vector<std::string>* survived = attempts_.survivors(id);
  auto it = active_jobs_.find(id);
  if (config_.recovery.warm_spares <= 0 || !survived || it == active_jobs_.end()) return false;
  Job& job = it->second;
  // Spares are for the first failure since training advanced; one after another backs off as usual.
  if (job.state != JobState::pending || job.held != Hold::none || job.infra_retries_in_a_row > 1) return false;
  if (unheard_.holds(id)) return false;  // tried again once its last attempt is surely stopped
  const auto usable = [&](const std::string& name) {
    const NodeEntry* entry = nodes_.find(name);
    if (!entry || !entry->channel || entry->node.state != NodeState::healthy || entry->low_disk || nodes_.under_test(name)) {
      return false;
    }
    const bool excluded = std::find(job.excluded_nodes.begin(), job.excluded_nodes.end(), name) != job.excluded_nodes.end();
    const bool fits = job.spec.cores_per_node ? entry->free_cores() >= *job.spec.cores_per_node : entry->used_cores == 0;
    return !excluded && fits;
  };
  std::vector<std::string> spares;
  for (const auto& [name, entry] : nodes_.entries()) {
    if (entry.spare) spares.push_back(name);
  }
  const auto chosen = resume_nodes(*survived, spares, job.spec.nodes, usable);
  if (!chosen) return false;
  scheduler::Start start{id, {}};
  for (const std::string& name : *chosen) start.nodes.push_back({name, job.spec.cores_per_node.value_or(nodes_.find(name)->node.cores)});
  const TimePoint now = clock_.system_now();
  scheduler_.start_running(scheduler::RunningJob{id, job.spec.share, start.nodes, now, job.spec.timeout_s, scheduler::array_limit(job),
                                                 rank_memory_mb(job.spec)},
                           now);
  spdlog::info("event=resume_on_spares job={} nodes={}", id, join_node_names(*chosen));
  start_attempt(job, start);
  keep_spares_warm();  // the spares it took are spares no more; others may take their place
  return true;
}

bool JobManager::give_up_on_unheard_ranks(ActiveAttempt& attempt) {
  if (!attempt.stopping()) return false;
  const MonoTime now = clock_.monotonic_now();
  std::vector<std::pair<int, Millis>> unheard;
  for (std::size_t r = 0; r < attempt.ranks.size(); ++r) {
    if (attempt.ranks[r].exited) continue;
    const NodeEntry* entry = nodes_.find(attempt.record.nodes[r]);
    // A node whose connection closed is the disconnect grace's to judge: that path knows when a
    // dead agent's ranks are stopped, sooner than the node timeout.
    if (!entry || !entry->channel || entry->disconnected_at) return false;
    const auto silent = std::chrono::duration_cast<Millis>(now - entry->heard_at);
    if (silent <= unanswered_after()) return false;
    unheard.emplace_back(static_cast<int>(r), silent);
  }
  if (unheard.empty()) return false;
  for (const auto& [rank, silent] : unheard) {
    attempt.ranks[static_cast<std::size_t>(rank)].unheard = true;
    mark_rank_lost(attempt, rank,
                   "node_lost: node " + attempt.record.nodes[static_cast<std::size_t>(rank)] +
                       " was not heard from for " + std::to_string(silent.count()) +
                       " ms while its attempt was being stopped");
  }
  return true;
}

void JobManager::heard_stopped(const std::string& node, AttemptId attempt) {
  if (auto stop = unheard_.heard_stopped(node, attempt)) unheard_stop_over(*stop);
}

void JobManager::heard_stopped_unless_listed(const std::string& node, const std::vector<AttemptReport>& listed) {
  for (AttemptId attempt : unheard_.attempts_on(node)) {
    const auto runs = [attempt](const AttemptReport& report) { return report.attempt_id == attempt; };
    if (std::none_of(listed.begin(), listed.end(), runs)) heard_stopped(node, attempt);
  }
}

void JobManager::unheard_stop_over(const UnheardStops::Stop& stop) {
  nodes_.release_unheard(stop.attempt, stop.node, stop.cores);
  spdlog::info("event=unheard_stop_over job={} attempt={} node={}", stop.job, stop.attempt, stop.node);
  auto it = active_jobs_.find(stop.job);
  if (!unheard_.holds(stop.job) && it != active_jobs_.end() && it->second.state == JobState::pending &&
      !resume_on_spares(stop.job)) {
    requeue(it->second);
  }
  request_schedule();
}

}  // namespace trainyard::daemon
