#pragma once
// The monitors (docs/DESIGN.md "Node registry and monitors"): what decides when the daemon
// tests its nodes and its own health, and what their results do to nodes.
//   - periodic checks: idle nodes in service are re-tested about once every
//     `periodic_check_interval`, never the whole fleet at once. The nodes, in name order, are cut
//     into groups of at most `group_size` (split_into_groups: stable while the fleet is); one group
//     after another is due, spread evenly over the interval, and a due group's idle members are
//     checked together (its collective suite and pair tests stay inside the group). At most
//     `max_checking_share` of the idle nodes are under periodic checks at a time (always one group
//     at least); a group that would pass that waits. No group starts while the queue waits for
//     nodes (`queue_waits`): a job that fits waits for no periodic check. The rotation starts early,
//     `first_comparison_after` after start, once three or more idle nodes can be compared in pairs
//     (so a fresh cluster's health matrix is not empty for an hour), else an interval after start;
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

#include "daemon/nodes/health_checks.h"
#include "daemon/nodes/node_registry.h"
#include "daemon/rank_state.h"
#include "daemon/policy/stuck_diagnosis.h"
#include "proto/messages.h"
#include "proto/result.h"
#include "proto/time.h"

namespace trainyard::daemon {

struct MonitorConfig {
  Millis periodic_check_interval{0};  // idle nodes are re-tested this often; 0: never
  Millis canary_interval{0};          // a canary job is submitted this often; 0: never
  int canary_nodes = 2;
  // The rotation of periodic checks starts this long after start as soon as three or more idle
  // nodes can be compared in pairs, rather than a whole interval after start; 0: not early.
  Millis first_comparison_after{0};
  std::size_t group_size = 16;      // nodes of one periodic check, at most
  double max_checking_share = 0.1;  // of the idle nodes, under periodic checks at once (one group at least)
};

class Monitors {
 public:
  // The first periodic check and canary are due one interval after `now`.
  Monitors(MonitorConfig config, NodeRegistry& nodes, MonoTime now);

  // What is due at `now`.
  struct Due {
    std::vector<HealthCheckRequest> periodic_checks;  // one per group of idle nodes due, within the share
    std::optional<JobSpec> canary;                    // unless one runs or no node is ready
  };
  // `canary_running` is asked only when a canary is due. `queue_waits`: a pending job waits for
  // nodes (the last scheduling pass could not place it); no periodic check starts meanwhile.
  Due tick(MonoTime now, const std::function<bool()>& canary_running, bool queue_waits = false);

  // A canary asked for at `now` (POST /v1/canaries): the spec a due one gets, and the next one on
  // the schedule an interval later; conflict saying why when one runs or no node is ready.
  Result<JobSpec> canary_now(MonoTime now, bool canary_running);
  // When the next canary on the schedule is due; nullopt when canaries are off.
  std::optional<MonoTime> next_canary() const;

  // Nullopt while every rank advanced within its allowance (the job's stuck_after_s, else learned:
  // daemon/policy/hang_rule.h). A command job's rank that never wrote a step is not judged when others did:
  // only some ranks of a command job may report. A command job none of whose ranks wrote a step is
  // judged on its ranks' idleness (no output, CPU or I/O, agent/rank_activity.h) against the pace
  // of their output, learned as steps are; a rank that never printed, only with stuck_after_s.
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
  std::vector<HealthCheckRequest> periodic_checks(MonoTime now, bool queue_waits);
  bool idle(const std::string& name, const NodeEntry& entry) const;  // in service, connected, running nothing, not under test
  std::optional<JobSpec> canary(bool canary_running) const;
  bool rotation_due(MonoTime now) const;

  MonitorConfig config_;
  NodeRegistry& nodes_;
  MonoTime started_;
  bool rotating_ = false;       // the rotation of periodic checks has started
  std::size_t next_group_ = 0;  // index of the next group due (modulo the groups there are)
  MonoTime next_group_at_;      // when it is due
  std::vector<std::vector<std::string>> checking_;  // nodes of the periodic checks started, until none is under test
  MonoTime next_canary_;
};

}  // namespace trainyard::daemon
