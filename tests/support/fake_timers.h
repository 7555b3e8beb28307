#pragma once
// Timers on the monotonic side of a manual clock. They fire only when the test says so: `advance`
// moves the clock and fires what falls due on the way; `fire_due` fires what the clock's present
// already reached. A test may step the clock's system side (`clock.step_system_clock`) as NTP would.
// Test thread only.
#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "proto/time.h"
#include "proto/timers.h"

namespace trainyard {

class FakeTimers final : public Timers {
 public:
  explicit FakeTimers(ManualTimeSource& clock) : clock(clock) {}
  FakeTimers(const FakeTimers&) = delete;
  FakeTimers& operator=(const FakeTimers&) = delete;

  ~FakeTimers() override {
    // A never-fired callback may hold its own timer (Timers::after): break that cycle. Swapped out
    // first, because destroying the callback destroys that timer, whose cancel() empties the slot.
    for (auto& slot : pending_) {
      std::function<void()> fire;
      fire.swap(slot->fire);
    }
  }

  std::unique_ptr<Timer> make() override { return std::make_unique<FakeTimer>(*this); }

  // Moves the clock forward by `by`, firing what falls due on the way, earliest first.
  void advance(Millis by) {
    const MonoTime until = clock.monotonic_now() + by;
    while (fire_next(until)) {
    }
    clock.advance(until - clock.monotonic_now());
  }

  // Fires every timer due by the clock's present (including ones that due timers arm), earliest
  // first; returns how many.
  int fire_due() {
    int fired = 0;
    while (fire_next(clock.monotonic_now())) ++fired;
    return fired;
  }

  // Armed and not yet fired or cancelled.
  std::size_t pending() const {
    return static_cast<std::size_t>(
        std::count_if(pending_.begin(), pending_.end(), [](const auto& slot) { return slot->fire != nullptr; }));
  }

  ManualTimeSource& clock;

 private:
  struct Slot {
    MonoTime due{};
    std::function<void()> fire;  // empty: cancelled or fired
  };

  class FakeTimer final : public Timer {
   public:
    explicit FakeTimer(FakeTimers& timers) : timers_(timers) {}
    ~FakeTimer() override { cancel(); }
    void start(Millis after, std::function<void()> fire) override {
      cancel();
      slot_ = std::make_shared<Slot>(Slot{timers_.clock.monotonic_now() + after, std::move(fire)});
      timers_.pending_.push_back(slot_);
    }
    void cancel() override {
      if (slot_) slot_->fire = nullptr;
    }

   private:
    FakeTimers& timers_;
    std::shared_ptr<Slot> slot_;
  };

  // Fires the earliest timer due by `until` (the first armed among equals), moving the clock to its
  // due time when that is later than now; false when none is due.
  bool fire_next(MonoTime until) {
    std::erase_if(pending_, [](const auto& slot) { return !slot->fire; });
    auto next = std::min_element(pending_.begin(), pending_.end(),
                                 [](const auto& a, const auto& b) { return a->due < b->due; });
    if (next == pending_.end() || (*next)->due > until) return false;
    if ((*next)->due > clock.monotonic_now()) clock.advance((*next)->due - clock.monotonic_now());
    std::function<void()> fire = std::move((*next)->fire);
    (*next)->fire = nullptr;
    fire();
    return true;
  }

  std::vector<std::shared_ptr<Slot>> pending_;
};

}  // namespace trainyard
