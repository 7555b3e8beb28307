#include "daemon/pause_tolerant_timers.h"

#include <spdlog/spdlog.h>

namespace trainyard::daemon {

// One inner timer serves both waits, so cancelling (or destroying) this one stops either.
class PauseTolerantTimers::Tolerant final : public Timer {
 public:
  Tolerant(PauseTolerantTimers& owner, std::unique_ptr<Timer> inner) : owner_(owner), inner_(std::move(inner)) {}

  void start(Millis after, std::function<void()> fire) override {
    const MonoTime due = owner_.clock_.monotonic_now() + after;
    inner_->start(after, [this, due, fire = std::move(fire)]() mutable {
      const auto late = std::chrono::duration_cast<Millis>(owner_.clock_.monotonic_now() - due);
      if (late <= owner_.tolerated_) return fire();
      ++owner_.held_back_;
      spdlog::info("event=timer_held_after_pause late_ms={} held_ms={}", late.count(), owner_.tolerated_.count());
      inner_->start(owner_.tolerated_, std::move(fire));
    });
  }
  void cancel() override { inner_->cancel(); }

 private:
  PauseTolerantTimers& owner_;
  std::unique_ptr<Timer> inner_;
};

PauseTolerantTimers::PauseTolerantTimers(Timers& inner, const TimeSource& clock, Millis tolerated)
    : inner_(inner), clock_(clock), tolerated_(tolerated) {}

std::unique_ptr<Timer> PauseTolerantTimers::make() { return std::make_unique<Tolerant>(*this, inner_.make()); }

}  // namespace trainyard::daemon
