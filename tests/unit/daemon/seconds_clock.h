// Times of the pure accounting tests, in seconds after a fixed epoch.
#pragma once

#include <cstdint>

#include "proto/time.h"

namespace trainyard::daemon::testing {

inline TimePoint at_s(double s) { return from_unix_ms(1'800'000'000'000 + static_cast<std::int64_t>(s * 1000)); }

}  // namespace trainyard::daemon::testing
