#include "daemon/webhooks/webhook_backoff.h"

#include <algorithm>
#include <array>
#include <charconv>

namespace trainyard::daemon {
namespace {

// Seconds of delay a receiver may ask for before we treat the number as garbage (about 30 years).
constexpr std::int64_t kMaxRetryAfterSeconds = 1'000'000'000;

std::optional<std::int64_t> digits_value(std::string_view text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

// IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT", exactly 29 characters.
std::optional<TimePoint> parse_imf_fixdate(std::string_view text) {
  static constexpr std::array<std::string_view, 7> kDays = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  static constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                               "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (text.size() != 29 || text.substr(3, 2) != ", " || text[7] != ' ' || text[11] != ' ' || text[16] != ' ' ||
      text[19] != ':' || text[22] != ':' || text.substr(25) != " GMT") {
    return std::nullopt;
  }
  if (std::find(kDays.begin(), kDays.end(), text.substr(0, 3)) == kDays.end()) return std::nullopt;
  const auto month = std::find(kMonths.begin(), kMonths.end(), text.substr(8, 3));
  const auto day = digits_value(text.substr(5, 2));
  const auto year = digits_value(text.substr(12, 4));
  const auto hour = digits_value(text.substr(17, 2));
  const auto minute = digits_value(text.substr(20, 2));
  const auto second = digits_value(text.substr(23, 2));
  if (month == kMonths.end() || !day || !year || !hour || !minute || !second || *hour > 23 || *minute > 59 ||
      *second > 60) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year(static_cast<int>(*year)),
                                         std::chrono::month(static_cast<unsigned>(month - kMonths.begin() + 1)),
                                         std::chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok()) return std::nullopt;
  return std::chrono::sys_days(date) + std::chrono::hours(*hour) + std::chrono::minutes(*minute) +
         std::chrono::seconds(*second);
}

}  // namespace

std::optional<TimePoint> next_attempt_at(const WebhookRetryPolicy& policy, int failures, TimePoint first_attempt_at,
                                         TimePoint now, std::optional<Millis> retry_after, std::mt19937_64& rng) {
  const TimePoint at = now + (retry_after ? *retry_after : backoff_wait(policy.waits, failures, rng));
  if (at > first_attempt_at + policy.give_up_after) return std::nullopt;
  return at;
}

std::optional<Millis> parse_retry_after(std::string_view value, TimePoint now) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (const auto seconds = digits_value(value)) {
    if (*seconds > kMaxRetryAfterSeconds) return std::nullopt;
    return std::chrono::seconds(*seconds);
  }
  const auto date = parse_imf_fixdate(value);
  if (!date) return std::nullopt;
  return std::max(Millis(0), std::chrono::duration_cast<Millis>(*date - now));
}

}  // namespace trainyard::daemon
