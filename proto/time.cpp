#include "proto/time.h"

#include <cstdio>
#include <ctime>

namespace trainyard::inline proto {

std::string format_time(TimePoint t) {
  const auto ms = to_unix_ms(t);
  const std::time_t secs = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  const int millis = static_cast<int>(ms - static_cast<std::int64_t>(secs) * 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  return buf;
}

std::optional<TimePoint> parse_time(std::string_view text) {
  int y, mo, d, h, mi, s, ms = 0;
  char z = 0;
  const std::string str(text);
  int n = std::sscanf(str.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &y, &mo, &d, &h, &mi, &s, &ms, &z);
  if (n != 8) {
    ms = 0;
    n = std::sscanf(str.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &z);
    if (n != 7) return std::nullopt;
  }
  if (z != 'Z' || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{static_cast<unsigned>(mo)},
                                        std::chrono::day{static_cast<unsigned>(d)}};
  if (!ymd.ok()) return std::nullopt;
  return std::chrono::sys_days{ymd} + std::chrono::hours{h} + std::chrono::minutes{mi} + std::chrono::seconds{s} +
         Millis{ms};
}

std::int64_t to_unix_ms(TimePoint t) { return t.time_since_epoch().count(); }
TimePoint from_unix_ms(std::int64_t ms) { return TimePoint{Millis{ms}}; }

TimePoint SystemTimeSource::system_now() const {
  return std::chrono::time_point_cast<Millis>(std::chrono::system_clock::now());
}

MonoTime SystemTimeSource::monotonic_now() const {
  return std::chrono::time_point_cast<Millis>(std::chrono::steady_clock::now());
}

}  // namespace trainyard::proto
