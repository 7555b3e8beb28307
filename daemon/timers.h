#pragma once
#include <functional>

#include "proto/time.h"

namespace trainyard::daemon {

// Delayed callbacks on the I/O thread (asio timers in the daemon, a fake in tests).
class Timers {
 public:
  virtual ~Timers() = default;
  virtual void after(Millis delay, std::function<void()> fn) = 0;
};

}  // namespace trainyard::daemon
