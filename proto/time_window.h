#pragma once
// Time bounds people type: "90s", "45m", "12h", "30d" (a span back from now), an RFC 3339 time or a
// plain UTC date "2026-11-24". One parser for the CLI (`trainyard history --since 1d`) and the API
// (`GET /v1/jobs?since=1d`), so both accept exactly the same text.
#include <cstdint>
#include <string_view>

#include "proto/time.h"

namespace trainyard::inline proto {

// "3600" (seconds), "90s", "45m", "12h" or "30d" as seconds in [1, max_s]; throws InvalidInput(field).
std::int64_t parse_duration_s(std::string_view text, std::string_view field, std::int64_t max_s);

// A span back from `now` ("2h": two hours ago), an RFC 3339 time, or a UTC date (its midnight);
// throws InvalidInput(field) naming the forms it accepts.
TimePoint parse_time_bound(std::string_view text, TimePoint now, std::string_view field);

}  // namespace trainyard::proto
