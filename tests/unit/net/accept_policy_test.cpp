// The accept loop's policy: backoff after failed accepts, rate-limited log lines and
// connection caps, as values, without sockets or a clock.
#include <gtest/gtest.h>

#include "net/accept_policy.h"

namespace trainyard::net {
namespace {

using std::chrono::milliseconds;

TEST(AcceptBackoff, DoublesFromTheFirstWaitUpToTheCeilingAndStartsAgainAfterASuccess) {
  AcceptBackoff backoff(milliseconds(50), milliseconds(1000));
  std::vector<long> waits;
  for (int i = 0; i < 7; ++i) waits.push_back(backoff.after_failure().count());
  EXPECT_EQ(waits, (std::vector<long>{50, 100, 200, 400, 800, 1000, 1000}));
  backoff.after_success();
  EXPECT_EQ(backoff.after_failure(), milliseconds(50));
}

TEST(RateLimitedLog, WritesOneLinePerIntervalSayingHowManyWereHeldBack) {
  RateLimitedLog log(milliseconds(1000));
  const SteadyTime t0{};
  EXPECT_EQ(log.occurred(t0), 0u) << "the first occurrence is written";
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(log.occurred(t0 + milliseconds(100 * i)), std::nullopt);
  EXPECT_EQ(log.occurred(t0 + milliseconds(999)), std::nullopt);
  EXPECT_EQ(log.occurred(t0 + milliseconds(1000)), 6u) << "the next line counts what was held back";
  EXPECT_EQ(log.occurred(t0 + milliseconds(1500)), std::nullopt);
  EXPECT_EQ(log.occurred(t0 + milliseconds(5000)), 1u);
  EXPECT_EQ(log.occurred(t0 + milliseconds(9000)), 0u);
}

TEST(ConnectionLimits, CapsOneAddressWithoutStarvingOthers) {
  ConnectionLimits limits({10, 2});
  EXPECT_EQ(limits.admit("10.0.0.1"), Admission::admitted);
  EXPECT_EQ(limits.admit("10.0.0.1"), Admission::admitted);
  EXPECT_EQ(limits.admit("10.0.0.1"), Admission::over_per_address);
  EXPECT_EQ(limits.admit("10.0.0.2"), Admission::admitted) << "another address still gets in";
  EXPECT_EQ(limits.open(), 3u) << "a refused connection is not counted as open";
  EXPECT_EQ(limits.open_from("10.0.0.1"), 2u);
  limits.release("10.0.0.1");
  EXPECT_EQ(limits.admit("10.0.0.1"), Admission::admitted) << "a closed connection makes room";
}

TEST(ConnectionLimits, CapsTheTotalAndReleasesWhatWasAdmitted) {
  ConnectionLimits limits({3, 3});
  EXPECT_EQ(limits.admit("a"), Admission::admitted);
  EXPECT_EQ(limits.admit("b"), Admission::admitted);
  EXPECT_EQ(limits.admit("c"), Admission::admitted);
  EXPECT_EQ(limits.admit("d"), Admission::over_total);
  limits.release("b");
  EXPECT_EQ(limits.admit("d"), Admission::admitted);
  for (const char* address : {"a", "c", "d"}) limits.release(address);
  EXPECT_EQ(limits.open(), 0u);
  EXPECT_EQ(limits.open_from("a"), 0u);
}

}  // namespace
}  // namespace trainyard::net
