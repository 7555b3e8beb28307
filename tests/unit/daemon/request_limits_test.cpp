// The per-user limits as pure policy: a token bucket on an injected clock, and the pending cap.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/request_limits.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

const MonoTime kStart{std::chrono::hours(1000)};
const Principal kAlice{"alice", store::Role::user};
const Principal kBob{"bob", store::Role::user};
const Principal kRoot{"root", store::Role::admin};

TEST(TokenBucketTest, AllowsABurstThenRefillsAtTheRate) {
  TokenBucket bucket(2, 3, kStart);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(bucket.take(kStart)) << "request " << i << " of the burst";
  EXPECT_EQ(bucket.take(kStart), Millis(500)) << "one token comes back every 1/2 s";
  EXPECT_EQ(bucket.take(kStart + Millis(200)), Millis(300));
  EXPECT_FALSE(bucket.take(kStart + Millis(500)));
  EXPECT_EQ(bucket.take(kStart + Millis(500)), Millis(500));
}

TEST(TokenBucketTest, NeverHoldsMoreThanTheBurst) {
  TokenBucket bucket(10, 2, kStart);
  const MonoTime later = kStart + std::chrono::hours(1);
  EXPECT_FALSE(bucket.take(later));
  EXPECT_FALSE(bucket.take(later));
  EXPECT_TRUE(bucket.take(later)) << "an hour of quiet saved more than the burst";
}

TEST(RateLimiterTest, EachUserHasABucketAndRetryAfterIsInWholeSeconds) {
  RateLimiter limiter({0.5, 2, false});
  EXPECT_FALSE(limiter.admit(kAlice, kStart));
  EXPECT_FALSE(limiter.admit(kAlice, kStart));
  EXPECT_EQ(limiter.admit(kAlice, kStart), 2) << "one token per 2 s";
  EXPECT_FALSE(limiter.admit(kBob, kStart)) << "alice's requests cost bob nothing";
  EXPECT_EQ(limiter.admit(kAlice, kStart + Millis(1500)), 1) << "0.5 s left rounds up to 1 s, never 0";
  EXPECT_FALSE(limiter.admit(kAlice, kStart + Millis(2000)));
}

TEST(RateLimiterTest, AdminsAreExemptUnlessIncluded) {
  RateLimiter exempt({1, 1, false});
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(exempt.admit(kRoot, kStart));
  RateLimiter included({1, 1, true});
  EXPECT_FALSE(included.admit(kRoot, kStart));
  EXPECT_EQ(included.admit(kRoot, kStart), 1);
}

TEST(RateLimiterTest, ZeroPerSecondMeansNoLimit) {
  RateLimiter off({0, 1, true});
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(off.admit(kAlice, kStart));
}

TEST(PendingCapTest, RefusesAtTheCapNamingIt) {
  EXPECT_TRUE(check_pending_cap(kAlice, 3, [] { return std::size_t{2}; }).ok());
  const auto refusal = check_pending_cap(kAlice, 3, [] { return std::size_t{3}; });
  ASSERT_FALSE(refusal.ok());
  EXPECT_EQ(refusal.error().code, ErrorCode::too_many_pending);
  EXPECT_THAT(refusal.error().message, HasSubstr("--max-pending-per-user 3"));
  EXPECT_THAT(refusal.error().message, HasSubstr("alice already has 3 pending jobs"));
}

TEST(PendingCapTest, AdminsAndAZeroCapAreNotCountedAtAll) {
  bool counted = false;
  auto count = [&] {
    counted = true;
    return std::size_t{1'000'000};
  };
  EXPECT_TRUE(check_pending_cap(kRoot, 3, count).ok());
  EXPECT_TRUE(check_pending_cap(kAlice, 0, count).ok());
  EXPECT_FALSE(counted) << "counting walks every active job; it must not run when the cap does not apply";
}

}  // namespace
}  // namespace trainyard::daemon::testing
