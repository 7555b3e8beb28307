#pragma once
// The monitors (docs/DESIGN.md "Node registry and monitors"): what decides when the daemon
// tests its nodes and its own health, and what their results do to nodes.
//   - periodic checks: idle nodes in service are re-tested every `periodic_check_interval`; the
//     first one runs early, `first_comparison_after` after start, once three or more idle nodes can
//     be compared in pairs (so a fresh cluster's health matrix is not empty for an hour);
//   - canaries: a known-good job every `canary_interval`; the nodes of a failed one are SUSPECT
//     until they pass a check;
//   - stuck detection: an attempt whose ranks stopped advancing is stopped, and the nodes of its
//     hung ranks are tested before it is classified.
// Intervals run on the monotonic clock. The monitors decide; the job manager starts the checks and
// jobs they ask for (its start_check applies every verdict to the node registry).
//
// Threading contract: I/O thread only.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "daemon/health_checks.h"
#include "daemon/node_registry.h"
#include "daemon/rank_state.h"
#include "daemon/stuck_diagnosis.h"
#include "proto/messages.h"
#include "proto/result.h"
#include "proto/time.h"

namespace trainyard::daemon {

struct MonitorConfig {
  Millis periodic_check_interval{0};  // idle nodes are re-tested this often; 0: never
  Millis canary_interval{0};          // a canary job is submitted this often; 0: never
  int canary_nodes = 2;
  // The first periodic check is due this long after start as soon as it can compare three or more
  // idle nodes in pairs, rather than a whole interval after start; 0: not early.
  Millis first_comparison_after{0};
};

class Monitors {
 public:
  // The first periodic check and canary are due one interval after `now`.
  Monitors(MonitorConfig config, NodeRegistry& nodes, MonoTime now);

  // What is due at `now`; each interval yields at most once.
  struct Due {
    std::optional<HealthCheckRequest> periodic_check;  // of the idle nodes, if any
    std::optional<JobSpec> canary;                     // unless one runs or no node is ready
  };
  // `canary_running` is asked only when a canary is due.
  Due tick(MonoTime now, const std::function<bool()>& canary_running);

  // A canary asked for at `now` (POST /v1/canaries): the spec a due one gets, and the next one on
  // the schedule an interval later; conflict saying why when one runs or no node is ready.
  Result<JobSpec> canary_now(MonoTime now, bool canary_running);
  // When the next canary on the schedule is due; nullopt when canaries are off.
  std::optional<MonoTime> next_canary() const;

  // Nullopt while every rank advanced within its allowance (the job's stuck_after_s, else learned:
  // daemon/hang_rule.h), or when the attempt reports no progress to judge (a command job that never
  // wrote a step). A command job's rank that never wrote a step is not judged: only some ranks of a
  // command job may report.
  static std::optional<StuckDiagnosis> stuck(const Job& job, const Attempt& attempt, const std::vector<RankState>& ranks,
                                             MonoTime now);
  // The check of the nodes a stuck attempt's hung ranks ran on; nullopt when none can be tested
  // (gone, or already under a check that will give its verdict).
  std::optional<HealthCheckRequest> stuck_nodes_check(const Job& job, const Attempt& attempt,
                                                      const std::vector<int>& stuck_ranks) const;

  // A failed canary: its nodes in service become SUSPECT (recorded in `change`) and are returned,
  // for canary_check once the change is stored. When a rank's node was lost, only lost nodes count:
  // the other ranks died of the kill that followed.
  std::vector<std::string> suspect_canary_nodes(const Job& canary, const Attempt& attempt,
                                                const std::vector<RankState>& ranks, store::Change& change);
  std::optional<HealthCheckRequest> canary_check(JobId canary, const std::vector<std::string>& suspects) const;

 private:
  std::optional<HealthCheckRequest> periodic_check() const;
  std::optional<JobSpec> canary(bool canary_running) const;
  bool first_comparison_due(MonoTime now) const;

  MonitorConfig config_;
  NodeRegistry& nodes_;
  MonoTime started_;
  bool compared_ = false;  // a periodic check of three or more nodes (pair tests) was asked for
  MonoTime next_periodic_check_;
  MonoTime next_canary_;
};

}  // namespace trainyard::daemon
