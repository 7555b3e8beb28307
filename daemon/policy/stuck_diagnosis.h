#pragma once
// Stuck detection (docs/DESIGN.md "Liveness and stuck attempts"): an attempt is stuck when one of
// its ranks went without advancing its training step for longer than that rank's allowance
// (daemon/policy/hang_rule.h), whether or not the others advance. Pure: progress in, verdict and diagnosis out.
//
// Design note. In data-parallel training one hung rank stops every rank: the others block in the
// next all-reduce, waiting for it. So "the ranks that stopped advancing" is all of them, and the
// useful diagnosis separates the rank that hangs from the ranks that wait: the culprits are the
// ranks at the lowest step (a rank that fell behind), and among those, the ones not inside a
// collective (a rank blocked in all-reduce is waiting for someone). When every candidate is in a
// collective, they are all named: the fault is then in the collective itself (a link, a peer).
// Where the ranks' processes were (daemon/policy/process_where.h) outranks their last reported phase: a rank
// with a stopped process is the culprit before any other, then one whose Python stack is not in a
// collective; a rank whose stack is in one waits. The diagnosis quotes where each process was.
//
// A command rank that reports no steps is judged on its idleness instead (no output, CPU or I/O:
// agent/rank_activity.h): `silent` is then how long it has been idle.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/policy/hang_rule.h"
#include "proto/messages.h"
#include "proto/time.h"

namespace trainyard::daemon {

struct RankProgress {
  int rank = 0;
  std::string node;
  std::int64_t step = 0;  // last step this rank completed
  std::string phase;      // what it was doing at its last report ("forward", "all-reduce", ...)
  Millis silent{0};       // since its step last advanced (or, judged on idleness, since it was last active)
  Allowance allowance;    // how long it may be silent
  bool judged_on_idleness = false;  // reports no steps: `silent` is its idle time
  std::vector<ProcessWhere> where;  // its processes, when its agent said where they were
};

struct StuckDiagnosis {
  std::vector<int> culprits;  // ranks named as the cause
  std::string text;           // "rank 3 (trn-3) blocked in forward at step 412; ranks 0-2 waiting in ..."
};

bool is_collective_phase(const std::string& phase);

// Nullopt while every rank advanced within its allowance (or there are no ranks).
std::optional<StuckDiagnosis> diagnose_stuck(const std::vector<RankProgress>& ranks);

}  // namespace trainyard::daemon
