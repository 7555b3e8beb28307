#pragma once
// Durations as fractional seconds, as rates, shares, metrics and accounting count time.
#include <algorithm>
#include <chrono>

#include "proto/time.h"

namespace trainyard::inline proto {

template <class Rep, class Period>
constexpr double in_seconds(std::chrono::duration<Rep, Period> d) {
  return std::chrono::duration<double>(d).count();
}

// Seconds from `from` to `to`, never negative: a system clock stepped back between the two reads
// counts as no time rather than as negative time.
inline double seconds_between(TimePoint from, TimePoint to) { return std::max(0.0, in_seconds(to - from)); }

}  // namespace trainyard::inline proto
