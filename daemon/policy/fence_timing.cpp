#include "daemon/policy/fence_timing.h"

#include <string>

#include "proto/errors.h"

namespace trainyard::daemon {
namespace {

std::string ms(Millis d) { return std::to_string(d.count()); }

}  // namespace

Millis fence_margin(Millis node_timeout) { return node_timeout / 10; }

Millis fence_time(const FenceTimingFlags& f) {
  if (f.fence && f.fence->count() == 0) return Millis(0);
  const Millis margin = fence_margin(f.node_timeout);
  const Millis shortest = f.heartbeat_interval * 2;
  const Millis fence = f.fence.value_or(f.node_timeout - f.kill_grace - margin);
  if (fence < shortest) {
    // The margin grows with the node timeout: the least that holds is (shortest + grace) / 0.9.
    const std::string needed = ms(((shortest + f.kill_grace) * 10 + Millis(8)) / 9);
    if (f.fence) {
      throw InvalidInput("--fence-ms", ms(fence) + " would stop attempts on a healthy node that missed one heartbeat: "
                                       "give at least 2 heartbeat intervals (" + ms(shortest) + ")");
    }
    throw InvalidInput("--node-timeout-ms",
                       ms(f.node_timeout) + " leaves an agent cut off from the daemon no time to stop its attempts "
                       "before they are replaced elsewhere: it must exceed --kill-grace-ms (" + ms(f.kill_grace) +
                       ") + a fence time of at least 2 heartbeat intervals (" + ms(shortest) +
                       ") + a margin of a tenth of itself; raise --node-timeout-ms (to about " + needed +
                       "), lower --kill-grace-ms or --heartbeat-interval-ms, or give --fence-ms 0 to let a cut-off "
                       "node's attempts run on beside their replacements");
  }
  if (fence + f.kill_grace + margin > f.node_timeout) {
    throw InvalidInput("--fence-ms", ms(fence) + " + --kill-grace-ms (" + ms(f.kill_grace) + ") + a margin of " +
                                         ms(margin) + " must not exceed --node-timeout-ms (" + ms(f.node_timeout) +
                                         "), or a cut-off node's attempts could still run when they are replaced; "
                                         "lower --fence-ms to at most " + ms(f.node_timeout - f.kill_grace - margin) +
                                         " or raise --node-timeout-ms");
  }
  return fence;
}

std::optional<std::string> takeover_warning(Millis fence, Millis lease_ttl) {
  const Millis takeover = lease_ttl * 6 / 5;
  if (fence.count() == 0 || fence / 2 >= takeover) return std::nullopt;
  return "agents fence after " + ms(fence) + " ms and leave a daemon that stopped answering after half that, before a "
         "standby can take over (up to " + ms(takeover) + " ms with --lease-ttl-ms " + ms(lease_ttl) + "): a paused "
         "active daemon costs its running jobs an attempt; lower --lease-ttl-ms, or give a fence time of at least " +
         ms(2 * takeover) + " ms (raise --node-timeout-ms, which the derived fence follows, or --fence-ms within it)";
}

}  // namespace trainyard::daemon
