#include "agent/watchdog.h"

#include <condition_variable>
#include <mutex>

namespace trainyard::agent {

Watchdog::Watchdog(std::chrono::steady_clock::duration budget)
    : timer_([this, deadline = std::chrono::steady_clock::now() + budget](std::stop_token dismissed) {
        std::mutex mutex;
        std::condition_variable_any woken;
        std::unique_lock lock(mutex);
        woken.wait_until(lock, dismissed, deadline, [] { return false; });
        if (!dismissed.stop_requested()) expired_.request_stop();
      }) {}

}  // namespace trainyard::agent
