#include "healthcheck/verdict.h"

#include <algorithm>
#include <cassert>
#include <map>

#include "healthcheck/format.h"
#include "healthcheck/run_figures.h"

namespace trainyard::healthcheck {
namespace {

std::vector<NodeVerdict> blame_all(const CollectiveRun& run, NodeState state, const std::string& reason) {
  std::vector<NodeVerdict> verdicts;
  for (const std::string& node : run.nodes) verdicts.push_back({node, state, reason});
  return verdicts;
}

std::string run_title(const CollectiveRun& run) {
  return "collective run over " + std::to_string(run.nodes.size()) + " nodes (" + joined(run.nodes) + ")";
}

// Why the run as a whole is below the absolute floor, empty if it is not.
std::string below_floor(const std::map<CollectiveKind, double>& medians, const CollectivePolicy& policy) {
  if (!policy.min_busbw) return "";
  for (CollectiveKind kind : kCollectiveKinds) {
    if (medians.at(kind) < *policy.min_busbw) {
      return std::string(trainyard::to_string(kind)) + " median busbw " + rate_text(medians.at(kind)) +
             " below the floor of " + rate_text(*policy.min_busbw);
    }
  }
  return "";
}

// Which ranks' ports refused connections during the run ("rank 1 (b) refused 280 connections"), empty if none did.
std::string refused_connections(const CollectiveRun& run) {
  std::string found;
  for (std::size_t r = 0; r < run.ranks.size(); ++r) {
    if (run.ranks[r].refused_connections == 0) continue;
    found += (found.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r) + " (" + run.nodes[r] +
             ") refused " + std::to_string(run.ranks[r].refused_connections) + " data-plane connections";
  }
  return found;
}

// A result that came back wrong is the nodes' whoever was at the ports: only a transport failure is excused.
bool any_wrong_result(const CollectiveRun& run) {
  return std::any_of(run.ranks.begin(), run.ranks.end(), [](const RankCollectiveResult& rank) {
    return std::any_of(rank.collectives.begin(), rank.collectives.end(),
                       [](const CollectiveMeasurement& m) { return !m.exact || !m.error.empty(); });
  });
}

std::string ratio_text(double ratio) { return short_number(ratio) + "x"; }

// Why the node is slow ("core 2: GEMM in 0.93 ms, 3x the median of the other cores (0.31 ms)"), empty if it is not.
std::string slowness(const AcceleratorReport& report, const AcceleratorPolicy& policy) {
  std::string found;
  const auto add = [&found](const std::string& why) { found += (found.empty() ? "" : "; ") + why; };
  for (const CoreResult& core : report.cores) {
    if (core.gemm_ms <= 0) continue;
    std::vector<double> others;
    for (const CoreResult& other : report.cores) {
      if (other.core != core.core && other.gemm_ms > 0) others.push_back(other.gemm_ms);
    }
    if (others.empty()) continue;
    const double reference = median(std::move(others));
    if (core.gemm_ms >= policy.slow_ratio * reference) {
      add("core " + std::to_string(core.core) + ": GEMM in " + short_number(core.gemm_ms) + " ms, " +
          ratio_text(core.gemm_ms / reference) + " the median of the other cores (" + short_number(reference) + " ms)");
    }
  }
  const std::optional<double> node = node_gemm_ms(report);
  if (node && policy.fleet_gemm_ms && *policy.fleet_gemm_ms > 0 && *node >= policy.slow_ratio * *policy.fleet_gemm_ms) {
    add("GEMM in " + short_number(*node) + " ms (median core), " + ratio_text(*node / *policy.fleet_gemm_ms) +
        " the median of the other nodes (" + short_number(*policy.fleet_gemm_ms) + " ms)");
  }
  return found;
}

}  // namespace

std::optional<double> node_gemm_ms(const AcceleratorReport& report) {
  std::vector<double> times;
  for (const CoreResult& core : report.cores) {
    if (core.gemm_ms > 0) times.push_back(core.gemm_ms);
  }
  if (times.empty()) return std::nullopt;
  return median(std::move(times));
}

NodeVerdict judge_accelerator(const std::string& node, const AcceleratorReport& report, const AcceleratorPolicy& policy) {
  if (report.cores.empty()) return {node, NodeState::unhealthy, "accelerator suite tested no cores"};
  std::string failures;
  int failed = 0;
  for (const CoreResult& core : report.cores) {
    if (core.passed()) continue;
    ++failed;
    for (const CheckResult& check : core.checks) {
      if (check.status == CheckStatus::passed || check.status == CheckStatus::skipped) continue;
      failures += (failures.empty() ? "" : "; ") + check.reason;
    }
  }
  const std::string tally = std::to_string(report.cores.size()) + " cores";
  if (failed == 0) {
    if (const std::string slow = slowness(report, policy); !slow.empty()) {
      return {node, NodeState::suspect, "accelerator suite passed on all " + tally + " but is slow: " + slow};
    }
    return {node, NodeState::healthy, "accelerator suite passed on all " + tally};
  }
  return {node, NodeState::unhealthy, std::to_string(failed) + " of " + tally + " failed: " + failures};
}

CollectiveVerdict judge_collective_run(const CollectiveRun& run, const CollectivePolicy& policy) {
  assert(run.nodes.size() == run.ranks.size());
  const bool can_localise = run.nodes.size() >= 3;
  const std::string localising = can_localise ? "; localising" : "";

  const std::string failure = run_failure(run);
  if (const std::string refused = refused_connections(run);
      !failure.empty() && !refused.empty() && !any_wrong_result(run)) {
    return {{}, false, run_title(run) + " failed while " + refused + ", so it judges no node: " + failure};
  }
  if (!failure.empty()) {
    return {blame_all(run, NodeState::unhealthy, run_title(run) + " failed: " + failure + localising), can_localise};
  }

  std::map<CollectiveKind, double> medians;
  for (CollectiveKind kind : kCollectiveKinds) {
    std::vector<double> values;
    for (const RankCollectiveResult& rank : run.ranks) values.push_back(rank_busbw(rank, kind).value_or(0));
    medians[kind] = median(std::move(values));
  }
  const std::string slow = below_floor(medians, policy);
  if (!slow.empty()) {
    return {blame_all(run, NodeState::suspect, run_title(run) + " is slow: " + slow + localising), can_localise};
  }

  CollectiveVerdict verdict;
  for (std::size_t r = 0; r < run.ranks.size(); ++r) {
    NodeVerdict node{run.nodes[r], NodeState::healthy,
                     "collectives exact; all_reduce busbw " +
                         rate_text(rank_busbw(run.ranks[r], CollectiveKind::all_reduce).value_or(0))};
    for (CollectiveKind kind : kCollectiveKinds) {
      const double mine = rank_busbw(run.ranks[r], kind).value_or(0);
      if (mine < policy.suspect_fraction * medians[kind]) {
        node.state = NodeState::suspect;
        node.reason = std::string(trainyard::to_string(kind)) + " busbw " + rate_text(mine) + " below " +
                      short_number(policy.suspect_fraction) + " x the median " + rate_text(medians[kind]) + " of " +
                      std::to_string(run.nodes.size()) + " nodes";
        break;
      }
    }
    verdict.nodes.push_back(std::move(node));
  }
  return verdict;
}

}  // namespace trainyard::healthcheck
