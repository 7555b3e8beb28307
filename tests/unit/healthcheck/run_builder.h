#pragma once
// Test support: collective runs made from measured figures, as the daemon would receive them.
#include <map>
#include <string>
#include <vector>

#include "healthcheck/results.h"
#include "proto/node.h"

namespace trainyard::healthcheck::testing {

inline constexpr double kMB = 1e6;

// One letter per node state, so a table of expected verdicts reads as a row of nodes.
inline constexpr NodeState H = NodeState::healthy;
inline constexpr NodeState S = NodeState::suspect;
inline constexpr NodeState U = NodeState::unhealthy;

// What one rank measured: the same busbw for every collective unless `per_kind` says otherwise.
struct RankFigures {
  double busbw = 100 * kMB;
  std::map<CollectiveKind, double> per_kind = {};
  std::string wrong = {};  // a wrong element, e.g. "all_reduce element 5 is 9, want 8"
  std::string error = {};  // a transport failure
  std::uint64_t refused = 0;  // connections its data-plane port refused during the run
};

inline RankCollectiveResult rank_result(int rank, int world, const RankFigures& f) {
  RankCollectiveResult r{rank, world, {}, f.error, std::nullopt, f.refused};
  if (!f.error.empty()) return r;
  for (CollectiveKind kind : {CollectiveKind::all_gather, CollectiveKind::all_reduce, CollectiveKind::reduce_scatter}) {
    const auto it = f.per_kind.find(kind);
    const bool wrong_here = !f.wrong.empty() && kind == CollectiveKind::all_reduce;
    r.collectives.push_back({kind, !wrong_here, 1 << 20, 0.01, it == f.per_kind.end() ? f.busbw : it->second,
                             wrong_here ? f.wrong : ""});
  }
  return r;
}

inline CollectiveRun run_of(const std::vector<std::string>& nodes, const std::vector<RankFigures>& figures) {
  CollectiveRun run{nodes, {}};
  const int world = static_cast<int>(nodes.size());
  for (int r = 0; r < world; ++r) run.ranks.push_back(rank_result(r, world, figures[static_cast<std::size_t>(r)]));
  return run;
}

inline std::vector<std::string> node_names(int count) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.push_back("node-" + std::string(1, static_cast<char>('a' + i)));
  return names;
}

}  // namespace trainyard::healthcheck::testing
