#pragma once
// Storm control for one webhook: at most `max_per_minute` messages per window.
// The first max - 1 events of a window go out one by one; once only the last message is left, the
// events that keep coming wait in the log until the window ends and then go out as one message
// (a summary, fold_events, when there is more than one). Nothing is dropped: a fold covers every
// event it stands for, by id. Pure: the caller passes the time.
//
// Failures never wait behind informational events: while the window's budget is spent, a message
// that carries a failure (is_failure_event) goes out at once from a budget of its own,
// `failure_reserve` a window. It covers the events before the failure too (a fold), so the
// webhook still receives every event once and in order.
#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

#include "proto/time.h"

namespace trainyard::daemon {

struct StormPolicy {
  int max_per_minute = 20;  // >= 1, checked where configured
  Millis window{std::chrono::minutes(1)};
  int failure_reserve = 5;  // >= 0: messages a window may add for failures once its budget is spent
};

// A job that failed or is stuck, a node going DOWN or UNHEALTHY, a failed canary: what someone
// must act on, never held back by storm control while its reserve lasts.
bool is_failure_event(std::string_view kind);

class StormGate {
 public:
  explicit StormGate(StormPolicy policy) : policy_(policy) {}

  enum class Action { send_one, fold_all, fold_through, wait };
  struct Step {
    Action action;
    TimePoint until{};       // when to ask again, for `wait`
    std::size_t count = 1;   // the oldest events the message covers, for `fold_through`
  };
  // What to do with the `pending` (> 0) events waiting, oldest first; `first_failure`: the index
  // among them of the oldest failure, if any.
  Step next(std::size_t pending, TimePoint now, std::optional<std::size_t> first_failure = std::nullopt);
  // The message `next` asked for went out (delivered or dead-lettered) at `now`.
  void sent(TimePoint now);
  bool failure_reserve_left() const { return failures_sent_in_window_ < policy_.failure_reserve; }

 private:
  void start_window(TimePoint now);

  StormPolicy policy_;
  std::optional<TimePoint> window_start_;  // nullopt before the first message
  int sent_in_window_ = 0;
  int failures_sent_in_window_ = 0;  // from the failure reserve
  bool closing_window_ = false;  // the next message is the held-back last one of the old window
  bool from_reserve_ = false;    // the next message is a failure's, from the reserve
};

}  // namespace trainyard::daemon
