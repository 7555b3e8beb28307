#pragma once
// A time budget for one device operation: its stop token fires when the budget runs out, and a
// hung NeuronCore (which waits on that token) gives up with OperationCancelled instead of holding
// the health suite forever. A thread waits out the budget; destroying the watchdog ends it at once.
//
// Threading contract: construct, pass `token()` to the operation, destroy, all on one thread.
#include <chrono>
#include <stop_token>
#include <thread>

namespace trainyard::agent {

class Watchdog {
 public:
  explicit Watchdog(std::chrono::steady_clock::duration budget);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  std::stop_token token() const { return expired_.get_token(); }

 private:
  std::stop_source expired_;
  std::jthread timer_;  // after `expired_`: it must stop before the source goes away
};

}  // namespace trainyard::agent
