#include "neuron/tcp_rate_limiter.h"

#include <gtest/gtest.h>

namespace trainyard::neuron {
namespace {

using std::chrono::milliseconds;

TEST(SendRateLimiterTest, StartsWithOneBurstThenRefillsAtTheRate) {
  const SteadyTime start{};
  SendRateLimiter limiter(100'000, start);  // 100 kB/s: a 10 ms burst is 1000 B, below the 1500 B floor
  EXPECT_EQ(limiter.burst_bytes(), 1500);
  EXPECT_EQ(limiter.allowance(start), 1500u);
  limiter.consume(1500);
  EXPECT_EQ(limiter.allowance(start), 0u);
  EXPECT_EQ(limiter.allowance(start + milliseconds(5)), 500u);
  EXPECT_EQ(limiter.allowance(start + milliseconds(1000)), 1500u) << "never more than one burst";
}

TEST(SendRateLimiterTest, LongRunRateIsTheConfiguredOne) {
  SteadyTime now{};
  SendRateLimiter limiter(1'000'000, now);
  std::size_t sent = 0;
  for (int tick = 0; tick < 1000; ++tick) {  // one simulated second in 1 ms ticks
    now += milliseconds(1);
    const std::size_t n = limiter.allowance(now);
    limiter.consume(n);
    sent += n;
  }
  EXPECT_NEAR(static_cast<double>(sent), 1'000'000, limiter.burst_bytes());
}

TEST(SendRateLimiterTest, ReadyAtIsWhenTheWantedBytesHaveAccrued) {
  const SteadyTime start{};
  SendRateLimiter limiter(1'000'000, start);  // burst 10 kB
  limiter.consume(limiter.allowance(start));
  EXPECT_EQ(limiter.ready_at(1000), start + milliseconds(1));
  EXPECT_EQ(limiter.ready_at(1'000'000), start + milliseconds(10)) << "capped at one burst";
  EXPECT_GE(limiter.allowance(limiter.ready_at(1000)), 1000u);
}

}  // namespace
}  // namespace trainyard::neuron
