#pragma once
// Delayed callbacks on the owner's I/O thread, for the daemon and the agent alike: asio timers in
// the processes (net/steady_timers.h), a manual clock's in tests (tests/support/fake_timers.h).
#include <functional>
#include <memory>
#include <utility>

#include "proto/time.h"

namespace trainyard::inline proto {

// One timer: `start` arms it (re-arming replaces what was armed); a timer cancelled, re-armed or
// destroyed before it falls due never calls what it was armed with. What fires may destroy its own
// timer, so an implementation lets go of `fire` before calling it.
class Timer {
 public:
  virtual ~Timer() = default;
  virtual void start(Millis after, std::function<void()> fire) = 0;
  virtual void cancel() = 0;
};

class Timers {
 public:
  virtual ~Timers() = default;
  virtual std::unique_ptr<Timer> make() = 0;

  // A timer nobody cancels: it keeps itself alive until it has fired.
  void after(Millis delay, std::function<void()> fire) {
    std::shared_ptr<Timer> timer = make();
    Timer& armed = *timer;
    armed.start(delay, [timer = std::move(timer), fire = std::move(fire)]() mutable {
      const std::shared_ptr<Timer> released = std::move(timer);
      fire();
    });
  }
};

}  // namespace trainyard::inline proto
