#include "cli/time_limit.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "proto/errors.h"
#include "proto/flag_parser.h"
#include "proto/time_window.h"

namespace trainyard::cli {
namespace {

// Far beyond any limit the daemon accepts (it names its own maximum), small enough never to overflow.
constexpr std::int64_t kMaxParsedS = 100LL * 365 * 86400;

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (;;) {
    const auto at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](unsigned char x, unsigned char y) {
           return std::tolower(x) == std::tolower(y);
         });
}

[[noreturn]] void refuse(std::string_view text, std::string_view field, BareNumber bare) {
  throw InvalidInput(std::string(field),
                     std::string("must be a time limit: ") +
                         (bare == BareNumber::minutes ? "MINUTES" : "SECONDS") +
                         ", MM:SS, HH:MM:SS, D-HH, D-HH:MM:SS, a duration (90s, 45m, 12h, 2d) or UNLIMITED, got \"" +
                         std::string(text) + "\"");
}

// "H:M:S", "H:M" or "H" after a day count ("2-12:30"): Slurm's days-hours forms.
std::optional<std::int64_t> after_days(std::string_view clock) {
  const auto parts = split(clock, ':');
  if (parts.size() > 3 || !std::all_of(parts.begin(), parts.end(), all_digits)) return std::nullopt;
  const std::int64_t limits[] = {23, 59, 59};
  const std::int64_t scales[] = {3600, 60, 1};
  std::int64_t seconds = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].size() > 2) return std::nullopt;
    const std::int64_t value = std::stoll(std::string(parts[i]));
    if (value > limits[i]) return std::nullopt;
    seconds += value * scales[i];
  }
  return seconds;
}

// "M:S" or "H:M:S": the first field may be large (sbatch takes "600:00"), the others are 0-59.
std::optional<std::int64_t> with_colons(std::string_view text) {
  const auto parts = split(text, ':');
  if (parts.size() > 3 || !std::all_of(parts.begin(), parts.end(), all_digits) || parts.front().size() > 9) {
    return std::nullopt;
  }
  std::int64_t seconds = std::stoll(std::string(parts.front()));
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].size() > 2) return std::nullopt;
    const std::int64_t value = std::stoll(std::string(parts[i]));
    if (value > 59) return std::nullopt;
    seconds = seconds * 60 + value;
  }
  return seconds;
}

}  // namespace

std::optional<std::int64_t> parse_time_limit(std::string_view text, std::string_view field, BareNumber bare) {
  if (equals_ignoring_case(text, "unlimited") || equals_ignoring_case(text, "infinite")) return std::nullopt;
  std::optional<std::int64_t> seconds;
  if (const auto dash = text.find('-'); dash != std::string_view::npos) {
    const std::string_view days = text.substr(0, dash);
    if (all_digits(days) && days.size() <= 4) {
      if (const auto rest = after_days(text.substr(dash + 1))) seconds = std::stoll(std::string(days)) * 86400 + *rest;
    }
  } else if (text.find(':') != std::string_view::npos) {
    seconds = with_colons(text);
  } else if (all_digits(text)) {
    if (text.size() > 12) refuse(text, field, bare);
    seconds = std::stoll(std::string(text)) * (bare == BareNumber::minutes ? 60 : 1);
  } else {
    try {
      seconds = parse_duration_s(text, field, kMaxParsedS);
    } catch (const InvalidInput&) {
      refuse(text, field, bare);
    }
  }
  if (!seconds || *seconds < 1 || *seconds > kMaxParsedS) refuse(text, field, bare);
  return seconds;
}

std::string format_time_limit(std::int64_t seconds) {
  const std::int64_t days = seconds / 86400, hours = seconds / 3600 % 24, minutes = seconds / 60 % 60, secs = seconds % 60;
  const auto two = [](std::int64_t n) { return (n < 10 ? "0" : "") + std::to_string(n); };
  const std::string minutes_seconds = two(minutes) + ":" + two(secs);
  if (days > 0) return std::to_string(days) + "-" + two(hours) + ":" + minutes_seconds;
  if (hours > 0) return std::to_string(hours) + ":" + minutes_seconds;
  return std::to_string(minutes) + ":" + two(secs);
}

std::optional<Json> time_limit_flags(const ParsedArgs& args) {
  const auto time = args.opt_string("--time");
  const auto timeout = args.opt_string("--timeout");
  if (time && timeout) throw InvalidInput("--time", "give either --time or --timeout, not both");
  if (!time && !timeout) return std::nullopt;
  const auto seconds = time ? parse_time_limit(*time, "--time", BareNumber::minutes)
                            : parse_time_limit(*timeout, "--timeout", BareNumber::seconds);
  return seconds ? Json(*seconds) : Json(nullptr);
}

}  // namespace trainyard::cli
