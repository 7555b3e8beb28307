#pragma once
// Storm control for one webhook: at most `max_per_minute` messages per window.
// The first max - 1 events of a window go out one by one; once only the last message is left, the
// events that keep coming wait in the log until the window ends and then go out as one message
// (a summary, fold_events, when there is more than one). Nothing is dropped: a fold covers every
// event it stands for, by id. Pure: the caller passes the time.
#include <chrono>
#include <cstddef>
#include <optional>

#include "proto/time.h"

namespace trainyard::daemon {

struct StormPolicy {
  int max_per_minute = 20;  // >= 1, checked where configured
  Millis window{std::chrono::minutes(1)};
};

class StormGate {
 public:
  explicit StormGate(StormPolicy policy) : policy_(policy) {}

  enum class Action { send_one, fold_all, wait };
  struct Step {
    Action action;
    TimePoint until{};  // when to ask again, for `wait`
  };
  // What to do with the `pending` (> 0) events waiting, oldest first.
  Step next(std::size_t pending, TimePoint now);
  // The message `next` asked for went out (delivered or dead-lettered) at `now`.
  void sent(TimePoint now);

 private:
  StormPolicy policy_;
  std::optional<TimePoint> window_start_;  // nullopt before the first message
  int sent_in_window_ = 0;
  bool closing_window_ = false;  // the next message is the held-back last one of the old window
};

}  // namespace trainyard::daemon
