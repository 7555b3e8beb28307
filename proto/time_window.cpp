#include "proto/time_window.h"

#include <array>
#include <string>

#include "proto/errors.h"
#include "proto/flag_parser.h"

namespace trainyard::inline proto {
namespace {

constexpr std::int64_t kMaxBackS = 100LL * 365 * 24 * 3600;

struct Unit {
  char suffix;
  std::int64_t seconds;
};
constexpr std::array kUnits = {Unit{'s', 1}, Unit{'m', 60}, Unit{'h', 3600}, Unit{'d', 86400}};

std::optional<TimePoint> parse_date(std::string_view text) {
  if (text.size() != 10) return std::nullopt;
  return parse_time(std::string(text) + "T00:00:00Z");
}

}  // namespace

std::int64_t parse_duration_s(std::string_view text, std::string_view field, std::int64_t max_s) {
  std::string_view digits = text;
  std::int64_t scale = 1;
  for (const Unit& unit : kUnits) {
    if (!text.empty() && text.back() == unit.suffix) {
      digits.remove_suffix(1);
      scale = unit.seconds;
    }
  }
  try {
    return parse_integer(field, digits, 1, max_s / scale) * scale;
  } catch (const InvalidInput&) {
    throw InvalidInput(std::string(field), "must be a duration like 3600, 90s, 45m, 12h or 30d (at most " +
                                               std::to_string(max_s / 86400) + " days), got \"" + std::string(text) +
                                               "\"");
  }
}

TimePoint parse_time_bound(std::string_view text, TimePoint now, std::string_view field) {
  if (auto t = parse_time(text)) return *t;
  if (auto day = parse_date(text)) return *day;
  try {
    return now - std::chrono::seconds(parse_duration_s(text, field, kMaxBackS));
  } catch (const InvalidInput&) {
    throw InvalidInput(std::string(field),
                       "must be a span back from now (90s, 45m, 12h, 30d), an RFC 3339 time or a date "
                       "like 2026-11-24, got \"" +
                           std::string(text) + "\"");
  }
}

}  // namespace trainyard::proto
