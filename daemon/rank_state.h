#pragma once
// One rank of an active attempt as the daemon tracks it: whether it started and exited, how it
// ended, and its progress (the input of stuck detection).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/policy/hang_rule.h"
#include "proto/messages.h"
#include "proto/time.h"

namespace trainyard::daemon {

struct RankState {
  bool started = false;
  bool exited = false;
  bool lost = false;
  bool unheard = false;        // lost without its node being heard to stop it (unheard_stops.h)
  bool health_failed = false;  // its node failed the attempt's pre-flight check
  // Progress as the daemon saw it: the last step, when it last advanced, and the phase reported.
  std::int64_t progress_step = 0;
  MonoTime progress_at{};
  std::string phase;
  StepPace pace;  // its learned step intervals: how long it may stay silent (daemon/policy/hang_rule.h)
  // A command rank's idleness as its agent measures it (agent/rank_activity.h): when it was last
  // active, its log's size, the intervals between heartbeats that found the log grown (its output's
  // pace: how long it may stay idle), and where its processes were once idle.
  std::optional<MonoTime> active_at;
  std::int64_t log_bytes = 0;
  StepPace output_pace{"output"};
  std::vector<ProcessWhere> where;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string reason;
  std::string log_tail;
  std::int64_t steps = 0;
  std::optional<MonoTime> unconfirmed_since;  // agent reconnected without mentioning this rank
  std::optional<int> peer_closed_rank;  // its exit said this rank's data-plane connection closed
  bool stopped_by_keeper = false;       // its node's fence keeper reported it stopped (recovery.h)
  std::optional<MonoTime> failed_at;    // when its failing exit was heard
};

}  // namespace trainyard::daemon
