#pragma once
// The daemon's own pauses (SIGSTOP, a stalled VM, a machine swapping): while the process does not
// run it hears nothing, so silence that fell in such a gap is the daemon's, not its nodes' or its
// ranks'. Acting on it would mark live nodes DOWN and fail running attempts as lost or stuck
// because the daemon itself was asleep. The periodic tick shows a pause: two ticks much further
// apart than the tick period. Measured on the monotonic clock, which runs on through a pause.
// Pure: tick times in, pause lengths out.
#include <optional>

#include "proto/time.h"

namespace trainyard::daemon {

// How much later than due a tick (or a timer) may run without it meaning the daemon was paused:
// the period plus max(3 periods, 1 s), since a loaded machine runs a tick late by less than that.
Millis pause_threshold(Millis tick_period);

class OwnPauses {
 public:
  // A gap between ticks of more than `pause_threshold` counts as a pause.
  explicit OwnPauses(Millis tick_period);

  // The tick runs at `now`: how long the daemon was paused since the tick before (zero when it was
  // not), that is the gap less the one period a tick is expected to take.
  Millis observe(MonoTime now);

 private:
  Millis period_;
  Millis tolerated_;
  std::optional<MonoTime> last_tick_;
};

}  // namespace trainyard::daemon
