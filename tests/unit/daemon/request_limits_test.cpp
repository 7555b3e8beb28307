// The per-user limits as pure policy: a token bucket on an injected clock, and the pending cap.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/request_limits.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

const MonoTime kClockStart{std::chrono::hours(1000)};
const Principal kAliceUser{"alice", store::Role::user};
const Principal kBobUser{"bob", store::Role::user};
const Principal kRootAdmin{"root", store::Role::admin};

TEST(TokenBucketTest, AllowsABurstThenRefillsAtTheRate) {
  TokenBucket bucket(2, 3, kClockStart);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(bucket.take(kClockStart)) << "request " << i << " of the burst";
  EXPECT_EQ(bucket.take(kClockStart), Millis(500)) << "one token comes back every 1/2 s";
  EXPECT_EQ(bucket.take(kClockStart + Millis(200)), Millis(300));
  EXPECT_FALSE(bucket.take(kClockStart + Millis(500)));
  EXPECT_EQ(bucket.take(kClockStart + Millis(500)), Millis(500));
}

TEST(TokenBucketTest, NeverHoldsMoreThanTheBurst) {
  TokenBucket bucket(10, 2, kClockStart);
  const MonoTime later = kClockStart + std::chrono::hours(1);
  EXPECT_FALSE(bucket.take(later));
  EXPECT_FALSE(bucket.take(later));
  EXPECT_TRUE(bucket.take(later)) << "an hour of quiet saved more than the burst";
}

TEST(RateLimiterTest, EachUserHasABucketAndRetryAfterIsInWholeSeconds) {
  RateLimiter limiter({0.5, 2, false});
  EXPECT_FALSE(limiter.admit(kAliceUser, kClockStart));
  EXPECT_FALSE(limiter.admit(kAliceUser, kClockStart));
  EXPECT_EQ(limiter.admit(kAliceUser, kClockStart), 2) << "one token per 2 s";
  EXPECT_FALSE(limiter.admit(kBobUser, kClockStart)) << "alice's requests cost bob nothing";
  EXPECT_EQ(limiter.admit(kAliceUser, kClockStart + Millis(1500)), 1) << "0.5 s left rounds up to 1 s, never 0";
  EXPECT_FALSE(limiter.admit(kAliceUser, kClockStart + Millis(2000)));
}

TEST(RateLimiterTest, AdminsAreExemptUnlessIncluded) {
  RateLimiter exempt({1, 1, false});
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(exempt.admit(kRootAdmin, kClockStart));
  RateLimiter included({1, 1, true});
  EXPECT_FALSE(included.admit(kRootAdmin, kClockStart));
  EXPECT_EQ(included.admit(kRootAdmin, kClockStart), 1);
}

TEST(RateLimiterTest, ZeroPerSecondMeansNoLimit) {
  RateLimiter off({0, 1, true});
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(off.admit(kAliceUser, kClockStart));
}

TEST(PendingCapTest, RefusesAtTheCapNamingIt) {
  EXPECT_TRUE(check_pending_cap(kAliceUser, 3, [] { return std::size_t{2}; }).ok());
  const auto refusal = check_pending_cap(kAliceUser, 3, [] { return std::size_t{3}; });
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
  EXPECT_TRUE(check_pending_cap(kRootAdmin, 3, count).ok());
  EXPECT_TRUE(check_pending_cap(kAliceUser, 0, count).ok());
  EXPECT_FALSE(counted) << "counting walks every active job; it must not run when the cap does not apply";
}

}  // namespace
}  // namespace trainyard::daemon::testing
