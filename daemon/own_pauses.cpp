#include "daemon/own_pauses.h"

#include <algorithm>
#include <utility>

namespace trainyard::daemon {

Millis pause_threshold(Millis tick_period) { return tick_period + std::max(3 * tick_period, Millis(1000)); }

OwnPauses::OwnPauses(Millis tick_period) : period_(tick_period), tolerated_(pause_threshold(tick_period)) {}

Millis OwnPauses::observe(MonoTime now) {
  const std::optional<MonoTime> last = std::exchange(last_tick_, now);
  if (!last) return Millis(0);
  const auto gap = std::chrono::duration_cast<Millis>(now - *last);
  return gap > tolerated_ ? gap - period_ : Millis(0);
}

}  // namespace trainyard::daemon
