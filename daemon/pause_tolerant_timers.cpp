#include "daemon/pause_tolerant_timers.h"

#include <spdlog/spdlog.h>

namespace trainyard::daemon {

PauseTolerantTimers::PauseTolerantTimers(Timers& inner, const TimeSource& clock, Millis tolerated)
    : inner_(inner), clock_(clock), tolerated_(tolerated) {}

void PauseTolerantTimers::after(Millis delay, std::function<void()> fn) {
  const MonoTime due = clock_.monotonic_now() + delay;
  inner_.after(delay, [this, due, fn = std::move(fn)]() mutable {
    const auto late = std::chrono::duration_cast<Millis>(clock_.monotonic_now() - due);
    if (late <= tolerated_) return fn();
    ++held_back_;
    spdlog::info("event=timer_held_after_pause late_ms={} held_ms={}", late.count(), tolerated_.count());
    inner_.after(tolerated_, std::move(fn));
  });
}

}  // namespace trainyard::daemon
