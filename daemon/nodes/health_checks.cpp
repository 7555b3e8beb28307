#include "daemon/nodes/health_checks.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "daemon/base/auth.h"
#include "healthcheck/health_json.h"
#include "healthcheck/run_figures.h"

namespace trainyard::daemon {
namespace {

// Data-plane sessions of health tests live far above any attempt id, so they never meet an attempt.
constexpr std::int64_t kHealthSessionBase = std::int64_t{1} << 62;
constexpr std::size_t kFinishedKept = 256;
// Runs of the whole set a check makes when each is interfered with, before it gives up judging.
constexpr int kInterferedRunsTried = 3;

int severity(NodeState s) { return s == NodeState::unhealthy ? 2 : s == NodeState::suspect ? 1 : 0; }

Json accelerator_json(const std::map<std::string, healthcheck::AcceleratorReport>& reports) {
  Json j = Json::object();
  for (const auto& [node, report] : reports) j[node] = healthcheck::to_json(report);
  return j;
}

}  // namespace

std::string to_string(HealthCheckKind k) {
  switch (k) {
    case HealthCheckKind::registration: return "registration";
    case HealthCheckKind::on_demand: return "on_demand";
    case HealthCheckKind::preflight: return "preflight";
    case HealthCheckKind::periodic: return "periodic";
    case HealthCheckKind::undrain: return "undrain";
    case HealthCheckKind::after_stuck: return "after_stuck";
    case HealthCheckKind::after_canary: return "after_canary";
    case HealthCheckKind::warm_spare: return "warm_spare";
    case HealthCheckKind::after_straggler: return "after_straggler";
  }
  return "on_demand";
}

bool HealthCheckResult::passed() const { return finished_at && error.empty() && failed_nodes().empty(); }

std::vector<std::string> HealthCheckResult::failed_nodes() const {
  std::vector<std::string> out;
  for (const auto& v : verdicts) {
    if (v.state != NodeState::healthy) out.push_back(v.node);
  }
  return out;
}

Json to_json(const HealthCheckResult& r) {
  Json suites = Json::array();
  if (r.request.accelerator) suites.push_back("accelerator");
  if (r.request.collective) suites.push_back("collective");
  Json runs = Json::array();
  for (const auto& run : r.collective_runs) runs.push_back(healthcheck::to_json(run));
  Json verdicts = Json::array();
  for (const auto& v : r.verdicts) verdicts.push_back(healthcheck::to_json(v));
  Json j = {{"id", r.id},
            {"kind", to_string(r.request.kind)},
            {"nodes", r.request.nodes},
            {"suites", suites},
            {"requested_by", r.request.requested_by},
            {"state", !r.finished_at ? "RUNNING" : r.passed() ? "PASSED" : "FAILED"},
            {"created_at", format_time(r.created_at)},
            {"accelerator", accelerator_json(r.accelerator)},
            {"errors", r.errors},
            {"collective_runs", runs},
            {"verdicts", verdicts}};
  if (!r.error.empty()) j["error"] = r.error;
  if (r.collective_runs.size() > 1) {
    // The pair tests and the reference they were judged against, as the verdicts saw them.
    const std::vector<healthcheck::CollectiveRun> follow_ups(r.collective_runs.begin() + 1, r.collective_runs.end());
    j["localisation"] = healthcheck::to_json(healthcheck::report_localisation(follow_ups, r.policy));
  }
  if (r.finished_at) {
    j["finished_at"] = format_time(*r.finished_at);
    j["duration_ms"] = std::chrono::duration_cast<Millis>(*r.finished_at - r.created_at).count();
  }
  return j;
}

Json node_health_record(const HealthCheckResult& r, const std::string& node) {
  Json j = {{"check_id", r.id}, {"kind", to_string(r.request.kind)}, {"verdict", "NOT_TESTED"}, {"reason", ""}};
  for (const auto& v : r.verdicts) {
    if (v.node == node) j.update(Json{{"verdict", to_string(v.state)}, {"reason", v.reason}});
  }
  if (auto a = r.accelerator.find(node); a != r.accelerator.end()) j["accelerator"] = healthcheck::to_json(a->second);
  if (auto e = r.errors.find(node); e != r.errors.end()) j["error"] = e->second;
  Json collective = Json::array();
  for (const auto& run : r.collective_runs) {
    for (std::size_t rank = 0; rank < run.nodes.size(); ++rank) {
      if (run.nodes[rank] == node) collective.push_back({{"nodes", run.nodes}, {"result", healthcheck::to_json(run.ranks[rank])}});
    }
  }
  j["collective"] = collective;
  return j;
}

HealthChecks::HealthChecks(const TimeSource& clock, Timers& timers, HealthCheckConfig config, Send send,
                           DataAddr data_addr)
    : clock_(clock),
      timers_(timers),
      config_(std::move(config)),
      send_(std::move(send)),
      data_addr_(std::move(data_addr)) {}

std::int64_t HealthChecks::start(HealthCheckRequest request, Done done) {
  const std::int64_t id = next_check_++;
  Running& check = running_[id];
  check.result.id = id;
  check.result.request = std::move(request);
  check.result.created_at = clock_.system_now();
  check.done = std::move(done);
  check.result.policy = config_.policy;
  for (const auto& node : check.result.request.nodes) ++checking_[node];
  if (check.result.request.kind == HealthCheckKind::preflight) {
    // A pre-flight judges correctness only: speed needs enough nodes to compare, and a job's few
    // nodes measured once on a shared host are not that; the pair tests of other checks are.
    check.result.policy.suspect_fraction = 0;
    check.result.policy.min_busbw.reset();
  }
  spdlog::info("event=health_check_started check={} kind={} nodes=\"{}\" accelerator={} collective={}", id,
               to_string(check.result.request.kind), fmt::join(check.result.request.nodes, ","),
               check.result.request.accelerator, check.result.request.collective);
  if (check.result.request.accelerator) {
    check.phase = Phase::accelerator;
    for (const auto& node : check.result.request.nodes) {
      HealthCheckMsg msg;
      msg.suite = HealthSuite::accelerator;
      msg.options = healthcheck::to_json(config_.accelerator);
      send_task(check, node, std::move(msg), 0, 0);
    }
  }
  advance(check);
  return id;
}

void HealthChecks::send_task(Running& check, std::string node, HealthCheckMsg msg, std::size_t run, int rank) {
  const std::int64_t task_id = next_task_++;
  msg.task_id = task_id;
  tasks_[task_id] = Task{check.result.id, node, run, rank};
  ++check.outstanding;
  if (!send_(node, msg)) {
    task_done(task_id, node, HealthResultMsg{task_id, nullptr, "node " + node + " is not connected"});
    return;
  }
  timers_.after(config_.task_timeout, [this, task_id, node] {
    if (!tasks_.contains(task_id)) return;
    task_done(task_id, node,
              HealthResultMsg{task_id, nullptr,
                              fmt::format("no health result from {} within {:g} s", node,
                                          static_cast<double>(config_.task_timeout.count()) / 1000.0)});
  });
}

void HealthChecks::on_result(const std::string& node, const HealthResultMsg& msg) {
  auto it = tasks_.find(msg.task_id);
  if (it == tasks_.end() || it->second.node != node) {
    spdlog::warn("event=stale_health_result node={} task={}", node, msg.task_id);
    return;
  }
  task_done(msg.task_id, node, msg);
}

void HealthChecks::node_gone(const std::string& node, const std::string& why) {
  std::vector<std::int64_t> outstanding;  // ending one may send the next phase's tasks
  for (const auto& [id, task] : tasks_) {
    if (task.node == node) outstanding.push_back(id);
  }
  for (const std::int64_t id : outstanding) {
    if (tasks_.contains(id)) task_done(id, node, HealthResultMsg{id, nullptr, why});
  }
}

void HealthChecks::task_done(std::int64_t task_id, const std::string& node, const HealthResultMsg& msg) {
  const Task task = tasks_.at(task_id);
  tasks_.erase(task_id);
  auto running = running_.find(task.check);
  if (running == running_.end()) return;
  Running& check = running->second;
  HealthCheckResult& result = check.result;
  --check.outstanding;
  if (check.phase == Phase::accelerator) {
    if (msg.error.empty()) {
      try {
        result.accelerator[node] = healthcheck::accelerator_report_from_json(msg.result, "result");
      } catch (const InvalidInput& e) {
        result.errors[node] = std::string("unreadable accelerator result: ") + e.what();
      }
    } else {
      result.errors[node] = msg.error;
    }
  } else {
    healthcheck::CollectiveRun& run = result.collective_runs.at(task.run);
    healthcheck::RankCollectiveResult rank_result;
    if (msg.error.empty()) {
      try {
        rank_result = healthcheck::rank_collective_result_from_json(msg.result, "result");
      } catch (const InvalidInput& e) {
        rank_result.error = std::string("unreadable collective result: ") + e.what();
      }
    } else {
      rank_result.error = msg.error;
    }
    rank_result.rank = task.rank;
    rank_result.world_size = static_cast<int>(run.nodes.size());
    run.ranks.at(static_cast<std::size_t>(task.rank)) = std::move(rank_result);
  }
  advance(check);
}

void HealthChecks::merge(Running& check, const healthcheck::NodeVerdict& verdict) {
  auto [it, inserted] = check.verdicts.try_emplace(verdict.node, verdict);
  if (inserted) return;
  healthcheck::NodeVerdict& merged = it->second;
  if (verdict.state == NodeState::healthy) return;
  if (merged.state == NodeState::healthy) {
    merged = verdict;
    return;
  }
  if (severity(verdict.state) > severity(merged.state)) merged.state = verdict.state;
  merged.reason += "; " + verdict.reason;
}

void HealthChecks::judge_accelerator_phase(Running& check) {
  for (const auto& node : check.result.request.nodes) {
    if (auto report = check.result.accelerator.find(node); report != check.result.accelerator.end()) {
      healthcheck::AcceleratorPolicy policy = config_.accelerator_policy;
      policy.fleet_gemm_ms = fleet_gemm_ms(node);
      merge(check, healthcheck::judge_accelerator(node, report->second, policy));
      if (const std::optional<double> speed = healthcheck::node_gemm_ms(report->second)) node_gemm_ms_[node] = *speed;
    } else if (auto error = check.result.errors.find(node); error != check.result.errors.end()) {
      // "Busy" means not tested, not bad; anything else (no answer, not connected) is bad.
      if (error->second != kNodeBusyForHealthCheck) {
        merge(check, healthcheck::NodeVerdict{node, NodeState::unhealthy, error->second});
      }
    }
  }
}

std::optional<double> HealthChecks::fleet_gemm_ms(const std::string& except) const {
  std::vector<double> others;
  for (const auto& [node, speed] : node_gemm_ms_) {
    if (node != except) others.push_back(speed);
  }
  if (others.size() < 2) return std::nullopt;
  return healthcheck::median(std::move(others));
}

bool HealthChecks::start_collective_sets(Running& check, const std::vector<std::vector<std::string>>& sets) {
  // Every message of every set is built and checked before any is sent: a set is sent whole or not at all.
  struct Planned {
    std::vector<std::string> nodes;
    std::vector<HealthCheckMsg> messages;  // by rank
  };
  std::vector<Planned> planned;
  const Json options = healthcheck::to_json(config_.collective);
  for (const auto& set : sets) {
    if (set.size() > static_cast<std::size_t>(kMaxRanks)) {
      // Refused before a message is built: each would carry every rank's address.
      refuse(check, fmt::format("a collective suite over {} nodes was not sent: the protocol allows at most {} ranks "
                                "(split the check, as periodic checks are split into groups)",
                                set.size(), kMaxRanks));
      return false;
    }
    std::vector<std::string> peers;
    for (const auto& node : set) peers.push_back(data_addr_(node).value_or(""));
    const std::int64_t session = kHealthSessionBase + (check.result.id << 16) + check.sessions++;
    const std::string session_secret = random_hex(32);
    Planned p{set, {}};
    for (std::size_t rank = 0; rank < set.size(); ++rank) {
      HealthCheckMsg msg;
      msg.suite = HealthSuite::collective;
      msg.options = options;
      msg.rank = static_cast<int>(rank);
      msg.peers = peers;
      msg.session = session;
      msg.session_secret = session_secret;
      if (const std::string why = bounds_error(msg); !why.empty()) {
        refuse(check, "a collective suite message to " + set[rank] + " was not sent: " + why);
        return false;
      }
      p.messages.push_back(std::move(msg));
    }
    planned.push_back(std::move(p));
  }
  for (Planned& p : planned) {
    const std::size_t run_index = check.result.collective_runs.size();
    healthcheck::CollectiveRun run;
    run.nodes = p.nodes;
    run.ranks.resize(p.nodes.size());
    check.result.collective_runs.push_back(std::move(run));
    for (std::size_t rank = 0; rank < p.nodes.size(); ++rank) {
      send_task(check, p.nodes[rank], std::move(p.messages[rank]), run_index, static_cast<int>(rank));
    }
  }
  return true;
}

void HealthChecks::refuse(Running& check, std::string why) {
  spdlog::error("event=health_check_refused check={} kind={} nodes={} error=\"{}\"", check.result.id,
                to_string(check.result.request.kind), check.result.request.nodes.size(), why);
  if (check.result.error.empty()) check.result.error = std::move(why);
}

void HealthChecks::judge_collective_phase(Running& check) {
  const bool preflight = check.result.request.kind == HealthCheckKind::preflight;
  const healthcheck::CollectiveVerdict verdict =
      healthcheck::judge_collective_run(check.result.collective_runs.front(), check.result.policy);
  if (!verdict.interference.empty()) {
    spdlog::warn("event=health_check_interfered check={} kind={} run={} of={} reason=\"{}\"", check.result.id,
                 to_string(check.result.request.kind), check.interfered_runs + 1, kInterferedRunsTried,
                 verdict.interference);
    if (++check.interfered_runs >= kInterferedRunsTried) {
      check.result.error = verdict.interference;  // a failed check that names no node
      return;
    }
    // Run again on a fresh session: the nodes are judged by a run nobody interfered with, or not at all.
    const std::vector<std::string> set = check.result.collective_runs.front().nodes;
    check.result.collective_runs.clear();
    start_collective_sets(check, {set});
    return;
  }
  // A pre-flight only needs to know the set works; other checks compare pairs (kPairTestNodes).
  const bool compare_pairs = !preflight && check.result.collective_runs.front().nodes.size() >= kPairTestNodes;
  if (verdict.needs_localisation || compare_pairs) {
    check.plan = healthcheck::plan_localisation(check.result.collective_runs.front().nodes, config_.group_size);
    if (!check.plan.rounds.empty()) {
      check.phase = Phase::localisation;
      check.round = 0;
      start_collective_sets(check, check.plan.rounds[0]);  // refused: the check ends with its error
      return;
    }
  }
  for (const auto& v : verdict.nodes) merge(check, v);
}

void HealthChecks::advance(Running& check) {
  if (check.outstanding > 0) return;
  switch (check.phase) {
    case Phase::accelerator: {
      if (check.result.request.accelerator) judge_accelerator_phase(check);
      std::vector<std::string> set;
      for (const auto& node : check.result.request.nodes) {
        auto v = check.verdicts.find(node);
        const bool excluded = v != check.verdicts.end() && v->second.state == NodeState::unhealthy;
        if (!excluded && data_addr_(node)) set.push_back(node);
      }
      if (check.result.request.collective && set.size() >= 2) {
        check.phase = Phase::collective;
        if (start_collective_sets(check, {set})) return;
      }
      break;
    }
    case Phase::collective:
      judge_collective_phase(check);
      if (check.outstanding > 0) return;  // localisation, or a run again, started
      break;
    case Phase::localisation:
      if (!check.result.error.empty()) break;  // a round was refused
      if (++check.round < check.plan.rounds.size()) {
        if (start_collective_sets(check, check.plan.rounds[check.round])) return;
        break;
      }
      {
        const std::vector<healthcheck::CollectiveRun> follow_ups(check.result.collective_runs.begin() + 1,
                                                            check.result.collective_runs.end());
        for (const auto& v : healthcheck::localise(follow_ups, check.result.policy)) merge(check, v);
      }
      break;
  }
  finish(check);
}

void HealthChecks::finish(Running& check) {
  HealthCheckResult& result = check.result;
  for (const auto& node : result.request.nodes) {
    if (auto v = check.verdicts.find(node); v != check.verdicts.end()) result.verdicts.push_back(v->second);
  }
  result.finished_at = clock_.system_now();
  spdlog::info("event=health_check_finished check={} kind={} passed={} failed=\"{}\" error=\"{}\" duration_ms={}",
               result.id, to_string(result.request.kind), result.passed(), fmt::join(result.failed_nodes(), ","), result.error,
               std::chrono::duration_cast<Millis>(*result.finished_at - result.created_at).count());
  const std::int64_t id = result.id;
  for (const auto& node : result.request.nodes) {
    if (auto it = checking_.find(node); it != checking_.end() && --it->second <= 0) checking_.erase(it);
  }
  Done done = std::move(check.done);
  finished_[id] = std::move(result);
  running_.erase(id);
  while (finished_.size() > kFinishedKept) finished_.erase(finished_.begin());
  if (done) done(finished_.at(id));
}

const HealthCheckResult* HealthChecks::find(std::int64_t id) const {
  if (auto it = running_.find(id); it != running_.end()) return &it->second.result;
  if (auto it = finished_.find(id); it != finished_.end()) return &it->second;
  return nullptr;
}

bool HealthChecks::running_on(const std::string& node) const {
  // Every outstanding task belongs to a running check, which counts its nodes in checking_.
  return checking_.contains(node);
}

}  // namespace trainyard::daemon
