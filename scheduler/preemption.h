#pragma once
// Checkpoint-aware preemption: which running gangs give back their nodes so that
// a job of a share below its fair share can start. Pure: a function of the facts passed in and
// `now`; the daemon stops the chosen victims (saving their work first) and requeues them.
//
// Standing. A share's standing is U/S: its part of all (decayed) usage over its part of the
// weights of the shares with work; 1 is exactly its fair share, and F = 2^(-U/S) orders shares the
// same way. A job may preempt only when its share's standing is below `below_fair_share`, and
// only work of shares whose standing is above `above_fair_share` may be preempted. The gap between
// the two (1.0 and 1.5 by default) is the hysteresis that keeps two shares from trading nodes back
// and forth: the preempting share must still be well below the victims' share after it started.
//
// Never thrash. A gang that has run less than `min_run_time` (since its attempt started: a
// resumed victim starts the clock again) is never chosen; a share may opt out; a job is never
// preempted for a job of its own share, nor for one of lower priority in a share that is not below
// its fair share (the standing test above already implies this; it is checked again on its own).
//
// Cheapest victims. Whole gangs only. Candidates are taken in order of fewest steps lost (done since
// their last checkpoint), then fewest cores, then the youngest, until the waiting job fits on the
// freed and free cores; victims that turn out not to be needed are then given back, so the set is
// minimal in that order. Nothing is chosen if the job would not fit even with every candidate gone.
//
// Cost: O(C log C + N) for C candidates and N nodes, so it can run in every scheduling pass.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scheduler/types.h"

namespace trainyard::scheduler {

struct PreemptionConfig {
  bool enabled = false;                        // off by default
  double below_fair_share = 1.0;               // the waiting job's share must stand below this
  double above_fair_share = 1.5;               // victims' shares must stand above this
  Millis min_run_time = std::chrono::minutes(10);
  std::set<std::string> exempt_shares;         // per-share opt-out: never preempted
};
// Throws InvalidInput naming the daemon flag ("preempt-below-fair-share-pct", ...).
void validate(const PreemptionConfig& config);

// A share's standing: U/S (see above). Shares without work are not listed.
struct ShareStanding {
  std::string share;
  double standing = 1.0;
};
// Standings from the scheduler's share table (usage and expected usage, active weights).
std::vector<ShareStanding> share_standings(const std::vector<ShareRow>& rows);

// A gang that holds cores and might give them back.
struct PreemptionCandidate {
  JobId job = 0;
  std::string share;
  int priority = 0;
  std::vector<NodeCores> nodes;
  TimePoint started_at{};             // of its current attempt
  std::int64_t steps_lost = 0;        // steps done since its newest checkpoint (what preemption costs)
};

// The job that cannot start now.
struct PreemptionRequest {
  JobId job = 0;
  std::string share;
  int priority = 0;
  int nodes = 1;
  std::optional<int> cores_per_node;  // nullopt: whole nodes
};

struct NodeRoom {
  std::string name;
  int cores = 0;       // the node's
  int free_cores = 0;  // free now
  bool accepts_work = true;
};

struct PreemptionPlan {
  std::vector<JobId> victims;  // in the order chosen
  std::string reason;          // one line for the events: who, why
};

std::optional<PreemptionPlan> plan_preemption(const PreemptionRequest& waiting,
                                              const std::vector<PreemptionCandidate>& running,
                                              const std::vector<NodeRoom>& nodes,
                                              const std::vector<ShareStanding>& standings,
                                              const PreemptionConfig& config, TimePoint now);

}  // namespace trainyard::scheduler
