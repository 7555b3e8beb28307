#pragma once
// When a failed webhook delivery is tried again: proto/backoff.h's exponential backoff with full
// jitter (a uniform delay in [0, min(cap, first * 2^(n-1))]), a receiver's Retry-After honoured on
// 429 and 503, and a horizon after which the delivery is dead-lettered. Pure: time and randomness
// are passed in.
#include <chrono>
#include <optional>
#include <random>
#include <string_view>

#include "proto/backoff.h"
#include "proto/time.h"

namespace trainyard::daemon {

struct WebhookRetryPolicy {
  BackoffPolicy waits{Millis(1000), std::chrono::minutes(10), Jitter::full};
  Millis give_up_after{std::chrono::hours(24)};  // counted from the delivery's first attempt
};

// When the delivery tries again after its `failures`-th failed attempt (failures >= 1) at `now`, or
// nullopt when that would be past the horizon: dead-letter it. A Retry-After the receiver sent
// replaces the jittered delay (the receiver knows when it will be ready).
std::optional<TimePoint> next_attempt_at(const WebhookRetryPolicy& policy, int failures, TimePoint first_attempt_at,
                                         TimePoint now, std::optional<Millis> retry_after, std::mt19937_64& rng);

// A Retry-After header value (RFC 9110 10.2.3): delay-seconds, or an IMF-fixdate
// ("Sun, 06 Nov 1994 08:49:37 GMT") turned into a delay from `now` (0 when already past).
// nullopt for anything else, the obsolete date formats included.
std::optional<Millis> parse_retry_after(std::string_view value, TimePoint now);

}  // namespace trainyard::daemon
