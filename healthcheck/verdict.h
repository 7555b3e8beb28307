#pragma once
// Health verdicts (docs/DESIGN.md "Health checks"), made by the daemon from what the suites measured.
//
// Design note. Verdicts are pure functions of measured values: no I/O, no clock (the caller stamps
// the time when it applies a state to a node), so they are tested as tables of numbers in, states
// out (docs/STYLE.md "Pure policy").
// - Accelerator: a node is HEALTHY when every test on every core passed; otherwise UNHEALTHY, and
//   the reason lists each failing core with its own reason ("core 3: GEMM element ... off by ...").
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

NodeVerdict judge_accelerator(const std::string& node, const AcceleratorReport& report);

struct CollectiveVerdict {
  std::vector<NodeVerdict> nodes;  // one per node of the run, in rank order
  bool needs_localisation = false;
  bool operator==(const CollectiveVerdict&) const = default;
};

CollectiveVerdict judge_collective_run(const CollectiveRun& run, const CollectivePolicy& policy);

}  // namespace trainyard::healthcheck
