#pragma once
// Time as the whole system sees it: UTC milliseconds, and an injectable source so that monitors,
// the scheduler and the job manager can be tested without sleeping (STYLE.md #5).
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace trainyard {

using TimePoint = std::chrono::sys_time<std::chrono::milliseconds>;
using Millis = std::chrono::milliseconds;

// RFC 3339 in UTC with milliseconds, e.g. "2026-11-22T13:49:51.123Z".
std::string format_time(TimePoint t);
std::optional<TimePoint> parse_time(std::string_view text);
std::int64_t to_unix_ms(TimePoint t);
TimePoint from_unix_ms(std::int64_t ms);

// Where "now" comes from. Implementations must be safe to call from any thread.
class TimeSource {
 public:
  virtual ~TimeSource() = default;
  virtual TimePoint now() const = 0;
};

class SystemTimeSource final : public TimeSource {
 public:
  TimePoint now() const override;
};

// A clock that only moves when a test moves it. Not thread-safe: tests drive it from one thread.
class ManualTimeSource final : public TimeSource {
 public:
  explicit ManualTimeSource(TimePoint start) : now_(start) {}
  TimePoint now() const override { return now_; }
  void advance(Millis by) { now_ += by; }
  void set(TimePoint t) { now_ = t; }

 private:
  TimePoint now_;
};

}  // namespace trainyard
