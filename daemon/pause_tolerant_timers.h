#pragma once
// Timers that do not act on what the daemon slept through. A timer that falls due while the daemon
// is paused (SIGSTOP, a stalled VM) fires first thing on waking, before the daemon has read what
// arrived meanwhile: a health result already in its socket, an agent's reconnect. Acting then
// would fail a health check as unanswered, or an attempt as lost, on a view the pause made stale
// (daemon/own_pauses.h does the same for the node and rank silences the tick judges). So a timer
// that fires later than its due time by more than the pause threshold waits once more, for that
// threshold, letting the I/O queued during the pause be handled before it acts; one on time fires
// at once. Pure: a decorator over any `Timers`, judged on the clock's monotonic time.
#include <cstdint>
#include <memory>

#include "proto/time.h"
#include "proto/timers.h"

namespace trainyard::daemon {

class PauseTolerantTimers final : public Timers {
 public:
  // `tolerated`: how late a timer may fire without it meaning a pause (`pause_threshold` of the
  // tick period, daemon/own_pauses.h).
  PauseTolerantTimers(Timers& inner, const TimeSource& clock, Millis tolerated);

  std::unique_ptr<Timer> make() override;

  // How many timers were held back after a pause, for the log and the tests.
  std::int64_t held_back() const { return held_back_; }

 private:
  class Tolerant;

  Timers& inner_;
  const TimeSource& clock_;
  Millis tolerated_;
  std::int64_t held_back_ = 0;
};

}  // namespace trainyard::daemon
