#pragma once
// At most one attempt of a job runs, even when a node is cut off from the daemon but keeps running.
// An agent that has had no heartbeat acknowledged for its fence time stops its attempts (SIGTERM,
// the kill grace, then SIGKILL: agent/agent.h); the daemon replaces a silent node's attempts only
// after the node timeout. An acknowledgement proves the daemon heard the agent after the heartbeat
// was sent, so the agent counts its fence time from that send, and by the time the daemon gives up
// on the node, its attempts are gone when
//
//     node timeout >= fence time + kill grace + margin
//
// where the margin (a tenth of the node timeout) covers how late the agent's fence check runs (it
// checks every twentieth of the fence time) and how far two monotonic clocks' rates can drift apart
// over a node timeout (under 1% with NTP; a twentieth allowed). The fence time must also leave a
// healthy link room for one lost heartbeat: at least two heartbeat intervals. Pure: flags in, the
// fence time out, or the flag to change.
#include <optional>
#include <string>

#include "proto/time.h"

namespace trainyard::daemon {

struct FenceTimingFlags {
  Millis heartbeat_interval{5000};
  Millis node_timeout{30000};
  Millis kill_grace{10000};
  // --fence-ms as given: nullopt derives the longest safe fence time; 0 turns fencing off (a cut-off
  // node's attempts then run on beside their replacements until it reconnects).
  std::optional<Millis> fence;
};

Millis fence_margin(Millis node_timeout);

// The fence time agents are told at hello (0: they never fence). Throws InvalidInput naming the
// flag to change when the inequality above cannot hold.
Millis fence_time(const FenceTimingFlags& flags);

// Across a take-over (active / standby): an agent leaves a daemon that stopped answering after half
// its fence time (agent/agent.h) and finds the standby active once the lease ran out, at most
// 1.2 lease ttls after the active daemon stopped renewing. A fence time shorter than twice that
// stops the running attempts of a paused or cut-off active daemon's nodes before they reach the
// new one: allowed (safe, only costly), so this is a warning naming the flags, or nullopt.
std::optional<std::string> takeover_warning(Millis fence, Millis lease_ttl);

}  // namespace trainyard::daemon
