#pragma once
// Time as the whole system sees it: UTC milliseconds, and an injectable source so that monitors,
// the scheduler and the job manager can be tested without sleeping (docs/STYLE.md "Time and randomness").
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace trainyard::inline proto {

using TimePoint = std::chrono::sys_time<std::chrono::milliseconds>;
using Millis = std::chrono::milliseconds;

// RFC 3339 in UTC with milliseconds, e.g. "2026-11-22T13:49:51.123Z".
std::string format_time(TimePoint t);
std::optional<TimePoint> parse_time(std::string_view text);
std::int64_t to_unix_ms(TimePoint t);
TimePoint from_unix_ms(std::int64_t ms);

// Monotonic time, for intervals only (timeouts, backoff, stuck detection, heartbeat age): it never
// jumps when the system clock is stepped, and means nothing outside this process, so it is never
// stored or shown.
using MonoTime = std::chrono::time_point<std::chrono::steady_clock, Millis>;

// Where "now" comes from, as Envoy's TimeSource: system time for what is shown and stored, monotonic
// time for how long something took. Implementations must be safe to call from any thread.
class TimeSource {
 public:
  virtual ~TimeSource() = default;
  virtual TimePoint system_now() const = 0;
  virtual MonoTime monotonic_now() const = 0;
};

class SystemTimeSource final : public TimeSource {
 public:
  TimePoint system_now() const override;
  MonoTime monotonic_now() const override;
};

// Clocks that only move when a test moves them. Not thread-safe: tests drive it from one thread.
class ManualTimeSource final : public TimeSource {
 public:
  explicit ManualTimeSource(TimePoint start) : system_(start) {}
  TimePoint system_now() const override { return system_; }
  MonoTime monotonic_now() const override { return monotonic_; }
  // Time passes: both clocks move.
  void advance(Millis by) {
    system_ += by;
    monotonic_ += by;
  }
  // The system clock is stepped (NTP, an operator), either way: monotonic time does not move.
  void step_system_clock(Millis by) { system_ += by; }

 private:
  TimePoint system_;
  MonoTime monotonic_{};
};

}  // namespace trainyard::proto
