// Backoff with full jitter, the dead-letter horizon and Retry-After, with a fake clock and a seeded RNG.
#include <gtest/gtest.h>

#include "daemon/webhooks/webhook_backoff.h"

namespace trainyard::daemon {
namespace {

using namespace std::chrono_literals;

const TimePoint kFirstFailure = from_unix_ms(1'700'000'000'000);

TEST(WebhookBackoff, FullJitterStaysUnderADoublingCeilingCappedAtTenMinutes) {
  const WebhookRetryPolicy policy;
  std::mt19937_64 rng(42);
  for (int retry = 1; retry <= 20; ++retry) {
    const Millis ceiling = std::min<Millis>(Millis(1000LL << std::min(retry - 1, 30)), 10min);
    Millis longest{0};
    for (int i = 0; i < 200; ++i) {
      const Millis d = backoff_wait(policy.waits, retry, rng);
      EXPECT_GE(d, 0ms);
      EXPECT_LE(d, ceiling) << "retry " << retry;
      longest = std::max(longest, d);
    }
    // Jitter spreads over the whole range, not a fixed delay.
    EXPECT_GT(longest, ceiling * 3 / 4) << "retry " << retry;
  }
}

TEST(WebhookBackoff, SameSeedSameSchedule) {
  const WebhookRetryPolicy policy;
  std::mt19937_64 a(7), b(7);
  for (int retry = 1; retry < 10; ++retry) {
    EXPECT_EQ(backoff_wait(policy.waits, retry, a), backoff_wait(policy.waits, retry, b));
  }
}

TEST(WebhookBackoff, RetriesUntilTheHorizonThenDeadLetters) {
  const WebhookRetryPolicy policy{{1s, 10min, Jitter::full}, 24h};
  std::mt19937_64 rng(1);
  TimePoint now = kFirstFailure;
  int failures = 0;
  while (auto next = next_attempt_at(policy, ++failures, kFirstFailure, now, std::nullopt, rng)) {
    ASSERT_GE(*next, now);
    now = *next;
  }
  EXPECT_LE(now, kFirstFailure + 24h);
  EXPECT_GT(now, kFirstFailure + 24h - 10min);  // gave up only because the next retry was past the horizon
  EXPECT_GT(failures, 24 * 6);           // at least one try per 10 minutes for a day
}

TEST(WebhookBackoff, TestsConfigureItDownToMilliseconds) {
  const WebhookRetryPolicy quick{{10ms, 40ms, Jitter::full}, 200ms};
  std::mt19937_64 rng(3);
  EXPECT_LE(backoff_wait(quick.waits, 10, rng), 40ms);
  EXPECT_EQ(next_attempt_at(quick, 1, kFirstFailure, kFirstFailure + 199ms, 50ms, rng), std::nullopt);
}

TEST(WebhookBackoff, RetryAfterReplacesTheJitteredDelay) {
  const WebhookRetryPolicy policy;
  std::mt19937_64 rng(5);
  EXPECT_EQ(next_attempt_at(policy, 1, kFirstFailure, kFirstFailure, 30s, rng), kFirstFailure + 30s);
  EXPECT_EQ(next_attempt_at(policy, 1, kFirstFailure, kFirstFailure, 25h, rng), std::nullopt);
}

TEST(RetryAfter, DelaySeconds) {
  EXPECT_EQ(parse_retry_after("120", kFirstFailure), 120s);
  EXPECT_EQ(parse_retry_after(" 0 ", kFirstFailure), 0s);
  EXPECT_EQ(parse_retry_after("-1", kFirstFailure), std::nullopt);
  EXPECT_EQ(parse_retry_after("1.5", kFirstFailure), std::nullopt);
  EXPECT_EQ(parse_retry_after("99999999999", kFirstFailure), std::nullopt);
  EXPECT_EQ(parse_retry_after("", kFirstFailure), std::nullopt);
}

TEST(RetryAfter, HttpDate) {
  const TimePoint now = *parse_time("1994-11-06T08:49:00.000Z");
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now), 37s);
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:48:00 GMT", now), 0s);  // already past
  EXPECT_EQ(parse_retry_after("Sunday, 06-Nov-94 08:49:37 GMT", now), std::nullopt);  // obsolete RFC 850
  EXPECT_EQ(parse_retry_after("Sun, 31 Feb 1994 08:49:37 GMT", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 24:49:37 GMT", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 UTC", now), std::nullopt);
}

}  // namespace
}  // namespace trainyard::daemon
