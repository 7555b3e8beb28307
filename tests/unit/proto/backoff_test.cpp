#include "proto/backoff.h"

#include <gtest/gtest.h>

#include <set>

namespace trainyard {
namespace {

using std::chrono::milliseconds;

TEST(Backoff, EachWaitDoublesTheLastUpToTheCap) {
  const BackoffPolicy policy{milliseconds(100), milliseconds(1000)};
  EXPECT_EQ(backoff_ceiling(policy, 1), milliseconds(100));
  EXPECT_EQ(backoff_ceiling(policy, 2), milliseconds(200));
  EXPECT_EQ(backoff_ceiling(policy, 4), milliseconds(800));
  EXPECT_EQ(backoff_ceiling(policy, 5), milliseconds(1000));
  EXPECT_EQ(backoff_ceiling(policy, 1'000'000), milliseconds(1000)) << "no overflow however many failures";
  EXPECT_EQ(backoff_ceiling(policy, 0), milliseconds(100)) << "below 1 counts as the first";
  EXPECT_EQ(backoff_ceiling({milliseconds(500), milliseconds(100)}, 3), milliseconds(500)) << "a cap under the first wait";
}

TEST(Backoff, FullJitterDrawsFromZeroToTheWaitAndEqualJitterFromItsHalf) {
  std::mt19937_64 rng(7);
  std::set<long> full;
  std::set<long> equal;
  for (int i = 0; i < 2000; ++i) {
    const auto f = backoff_wait({milliseconds(100), milliseconds(10'000), Jitter::full}, 4, rng).count();
    ASSERT_GE(f, 0);
    ASSERT_LE(f, 800);
    full.insert(f);
    const auto e = backoff_wait({milliseconds(100), milliseconds(10'000), Jitter::equal}, 4, rng).count();
    ASSERT_GE(e, 400);
    ASSERT_LE(e, 800);
    equal.insert(e);
  }
  EXPECT_LT(*full.begin(), 100) << "full jitter reaches near zero";
  EXPECT_GT(*full.rbegin(), 700);
  EXPECT_GT(equal.size(), 200u) << "spread, not one value";
  EXPECT_EQ(backoff_wait({milliseconds(100), milliseconds(10'000), Jitter::none}, 4, rng), milliseconds(800));
}

TEST(Backoff, FailuresInARowGrowTheWaitAndASuccessStartsAgain) {
  Backoff backoff({milliseconds(10), milliseconds(35)});
  EXPECT_EQ(backoff.after_failure(), milliseconds(10));
  EXPECT_EQ(backoff.after_failure(), milliseconds(20));
  EXPECT_EQ(backoff.after_failure(), milliseconds(35));
  EXPECT_EQ(backoff.after_failure(), milliseconds(35));
  EXPECT_EQ(backoff.failures(), 4);
  backoff.after_success();
  EXPECT_EQ(backoff.after_failure(), milliseconds(10));
}

TEST(Backoff, TheSameSeedDrawsTheSameWaits) {
  Backoff a({milliseconds(100), milliseconds(5000), Jitter::full}, 42);
  Backoff b({milliseconds(100), milliseconds(5000), Jitter::full}, 42);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.after_failure(), b.after_failure());
}

}  // namespace
}  // namespace trainyard
