#pragma once
// Health verdicts (docs/DESIGN.md "Health checks"), made by the daemon from what the suites measured.
//
// Design note. Verdicts are pure functions of measured values: no I/O, no clock (the caller stamps
// the time when it applies a state to a node), so they are tested as tables of numbers in, states
// out (docs/STYLE.md "Pure policy").
// - Accelerator: a node is UNHEALTHY when a test on a core did not pass, and the reason lists each
//   failing core with its own reason ("core 3: GEMM element ... off by ..."). A node whose tests all
//   passed is SUSPECT when it is slow: a core whose GEMM time is at least `slow_ratio` times the
//   median of the node's other cores, or the node's median core at least `slow_ratio` times the
//   fleet's (the median over other nodes' latest figures, which the caller keeps). The fastest of
//   several timed GEMMs is compared, so a host busy with other work adds little; the default ratio
//   of 2 leaves room for what it still adds on a shared host (a straggler is found at 1.5x from its
//   own steps: daemon/policy/straggler_rule.h).
// - Collective run over a set of nodes: a rank with a wrong result or a failed transfer makes the
//   run fail; a rank whose busbw, for any of the three collectives, is below `suspect_fraction` of
//   the median over the set's ranks makes its node SUSPECT. The median, not the mean or the best,
//   because it stays put when a minority of nodes is slow. The run as a whole is slow when a
//   collective's median busbw is under the optional absolute floor `min_busbw`.
// - A failed or slow run with fewer than 3 nodes blames every node (there is nobody to compare
//   with). With 3 or more the verdict asks for localisation (localisation.h) instead of blaming
//   all: in a ring every rank waits for the slowest link, so one bad node makes every rank of the
//   ring look equally bad; the provisional verdicts it gives (all nodes blamed) are for a caller
//   that cannot run the follow-up tests.
// - A run that failed in transport (no wrong result) while any rank's data-plane port refused
//   connections was interfered with (a job flooding the port, a stranger's wrong secret): its
//   failure says nothing about the nodes, so it judges none and says why (`interference`); the
//   caller runs it again or reports it. A wrong result is the nodes' whoever was at the ports.
#include <optional>
#include <string>
#include <vector>

#include "healthcheck/results.h"
#include "proto/node.h"

namespace trainyard::healthcheck {

struct NodeVerdict {
  std::string node;
  NodeState state = NodeState::healthy;  // HEALTHY, SUSPECT or UNHEALTHY
  std::string reason;
  bool operator==(const NodeVerdict&) const = default;
};

struct CollectivePolicy {
  double suspect_fraction = 0.5;     // of the set's median busbw
  std::optional<double> min_busbw;   // bytes per second; a run whose median is below it is slow
  bool operator==(const CollectivePolicy&) const = default;
};

struct AcceleratorPolicy {
  double slow_ratio = 2.0;
  // The median over other nodes' latest node figures (node_gemm_ms); none: too few to compare with.
  std::optional<double> fleet_gemm_ms;
  bool operator==(const AcceleratorPolicy&) const = default;
};

NodeVerdict judge_accelerator(const std::string& node, const AcceleratorReport& report,
                              const AcceleratorPolicy& policy = {});

// The node's speed: the median of its cores' GEMM times; none when no core was timed.
std::optional<double> node_gemm_ms(const AcceleratorReport& report);

struct CollectiveVerdict {
  std::vector<NodeVerdict> nodes;  // one per node of the run, in rank order; none when interfered with
  bool needs_localisation = false;
  std::string interference;  // why the failed run judges no node; empty when it judges them
  bool operator==(const CollectiveVerdict&) const = default;
};

CollectiveVerdict judge_collective_run(const CollectiveRun& run, const CollectivePolicy& policy);

}  // namespace trainyard::healthcheck
