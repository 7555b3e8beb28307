#include "daemon/webhooks/webhook_storm.h"

namespace trainyard::daemon {

StormGate::Step StormGate::next(std::size_t pending, TimePoint now) {
  const int last_slot = policy_.max_per_minute - 1;
  if (!window_start_ || now - *window_start_ >= policy_.window) {
    if (sent_in_window_ >= last_slot) {
      closing_window_ = true;
      return {pending > 1 ? Action::fold_all : Action::send_one};
    }
    window_start_ = now;
    sent_in_window_ = 0;
  }
  if (sent_in_window_ < last_slot) return {Action::send_one};
  return {Action::wait, *window_start_ + policy_.window};
}

void StormGate::sent(TimePoint now) {
  if (closing_window_) {
    closing_window_ = false;
    window_start_ = now;
    sent_in_window_ = 0;
    return;
  }
  ++sent_in_window_;
}

}  // namespace trainyard::daemon
