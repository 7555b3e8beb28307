#include "daemon/webhooks/webhook_storm.h"

#include <array>

namespace trainyard::daemon {

bool is_failure_event(std::string_view kind) {
  constexpr std::array<std::string_view, 5> kFailures = {"job.failed", "job.stuck", "node.down", "node.unhealthy",
                                                         "canary.failed"};
  for (const std::string_view failure : kFailures) {
    if (kind == failure) return true;
  }
  return false;
}

void StormGate::start_window(TimePoint now) {
  window_start_ = now;
  sent_in_window_ = 0;
  failures_sent_in_window_ = 0;
}

StormGate::Step StormGate::next(std::size_t pending, TimePoint now, std::optional<std::size_t> first_failure) {
  const int last_slot = policy_.max_per_minute - 1;
  from_reserve_ = false;
  if (!window_start_ || now - *window_start_ >= policy_.window) {
    if (sent_in_window_ >= last_slot) {
      closing_window_ = true;
      return {pending > 1 ? Action::fold_all : Action::send_one};
    }
    start_window(now);
  }
  if (sent_in_window_ < last_slot) return {Action::send_one};
  if (first_failure && failure_reserve_left()) {
    from_reserve_ = true;
    if (*first_failure == 0) return {Action::send_one};
    return {Action::fold_through, {}, *first_failure + 1};
  }
  return {Action::wait, *window_start_ + policy_.window};
}

void StormGate::sent(TimePoint now) {
  if (closing_window_) {
    closing_window_ = false;
    start_window(now);
    return;
  }
  if (from_reserve_) {
    from_reserve_ = false;
    ++failures_sent_in_window_;
    return;
  }
  ++sent_in_window_;
}

}  // namespace trainyard::daemon
