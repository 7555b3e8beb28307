// The accept loop's policy: backoff after failed accepts, rate-limited log lines and
// connection caps, as values, without sockets or a clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "net/accept_policy.h"

namespace trainyard::net {
namespace {

using std::chrono::milliseconds;

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

using Verdict = ConnectionLimits::Verdict;

Admission admission(const Verdict& v) { return v.admission; }

TEST(ConnectionLimits, CapsOneAddressWithoutStarvingOthers) {
  ConnectionLimits limits({10, 2, 10});
  EXPECT_EQ(admission(limits.admit(1, "10.0.0.1")), Admission::admitted);
  EXPECT_EQ(admission(limits.admit(2, "10.0.0.1")), Admission::admitted);
  limits.waiting(1, false);
  limits.waiting(2, false);  // both being answered: neither may give way
  EXPECT_EQ(admission(limits.admit(3, "10.0.0.1")), Admission::over_per_address);
  EXPECT_EQ(admission(limits.admit(4, "10.0.0.2")), Admission::admitted) << "another address still gets in";
  EXPECT_EQ(limits.open(), 3u) << "a refused connection is not counted as open";
  EXPECT_EQ(limits.open_from("10.0.0.1"), 2u);
  limits.release(1);
  EXPECT_EQ(admission(limits.admit(5, "10.0.0.1")), Admission::admitted) << "a closed connection makes room";
}

TEST(ConnectionLimits, CapsTheTotalAndReleasesWhatWasAdmitted) {
  ConnectionLimits limits({3, 3, 3});
  for (ConnectionLimits::Id id : {1, 2, 3}) {
    EXPECT_EQ(admission(limits.admit(id, std::string(1, static_cast<char>('a' + id)))), Admission::admitted);
    limits.waiting(id, false);
  }
  EXPECT_EQ(admission(limits.admit(4, "d")), Admission::over_total);
  limits.release(2);
  EXPECT_EQ(admission(limits.admit(4, "d")), Admission::admitted);
  for (ConnectionLimits::Id id : {1, 3, 4}) limits.release(id);
  EXPECT_EQ(limits.open(), 0u);
  EXPECT_EQ(limits.open_from("b"), 0u);
}

// A job on a node holds every anonymous connection its address may have, reopening each that
// closes; the node's agent connects from the same address.
TEST(ConnectionLimits, AnAddressAtItsCapMakesRoomByEvictingItsOldestSilentConnection) {
  ConnectionLimits limits({100, 3, 100});
  for (ConnectionLimits::Id id : {1, 2, 3}) EXPECT_EQ(admission(limits.admit(id, "node")), Admission::admitted);
  const Verdict agent = limits.admit(4, "node");
  EXPECT_EQ(agent.admission, Admission::admitted);
  EXPECT_EQ(agent.evict, ConnectionLimits::Id{1}) << "the oldest silent one gives way";
  EXPECT_EQ(limits.open_from("node"), 3u);
  limits.release(1);  // the evicted connection's own close counts nothing twice
  EXPECT_EQ(limits.open_from("node"), 3u);
  // The agent's upgrade request authenticates it: it no longer counts as the address's, and the
  // job's reopened connections evict each other, never it.
  limits.waiting(4, false);
  EXPECT_EQ(admission(limits.identify(4, Caller{"node:n1", true})), Admission::admitted);
  EXPECT_EQ(limits.open_from("node"), 2u);
  std::vector<ConnectionLimits::Id> evicted;
  for (ConnectionLimits::Id id = 5; id < 50; ++id) {
    const Verdict v = limits.admit(id, "node");
    ASSERT_EQ(v.admission, Admission::admitted);
    if (v.evict) evicted.push_back(*v.evict);
  }
  EXPECT_EQ(std::count(evicted.begin(), evicted.end(), ConnectionLimits::Id{4}), 0);
  EXPECT_EQ(evicted.front(), ConnectionLimits::Id{2});
  EXPECT_EQ(limits.open_as("node:n1"), 1u);
  EXPECT_EQ(limits.open(), 4u);
}

TEST(ConnectionLimits, OnlyAnAnonymousConnectionWaitingForARequestGivesWay) {
  ConnectionLimits limits({100, 2, 100});
  limits.admit(1, "a");
  limits.admit(2, "a");
  limits.waiting(1, false);  // its request is being answered
  const Verdict v = limits.admit(3, "a");
  EXPECT_EQ(v.evict, ConnectionLimits::Id{2}) << "the older one is busy, the younger silent one goes";
  limits.waiting(3, false);
  EXPECT_EQ(admission(limits.admit(4, "a")), Admission::over_per_address);
  limits.waiting(1, true);  // answered, waiting for the next request on the kept-alive connection
  EXPECT_EQ(limits.admit(4, "a").evict, ConnectionLimits::Id{1});
}

TEST(ConnectionLimits, AtTheTotalCapTheOldestSilentAnonymousConnectionOfAnyAddressGivesWay) {
  ConnectionLimits limits({3, 3, 3});
  limits.admit(1, "a");
  limits.waiting(1, false);
  limits.identify(1, Caller{"alice", false});
  limits.waiting(1, true);  // an authenticated idle connection never gives way
  limits.admit(2, "b");
  limits.admit(3, "c");
  const Verdict v = limits.admit(4, "d");
  EXPECT_EQ(v.admission, Admission::admitted);
  EXPECT_EQ(v.evict, ConnectionLimits::Id{2});
  EXPECT_EQ(limits.open(), 3u);
}

TEST(ConnectionLimits, AnAuthenticatedCallerHasACapOfItsOwnAndAgentsOnlyTheTotal) {
  ConnectionLimits limits({100, 100, 2});
  for (ConnectionLimits::Id id : {1, 2, 3}) {
    limits.admit(id, "10.0.0.1");
    limits.waiting(id, false);
  }
  EXPECT_EQ(admission(limits.identify(1, Caller{"bob", false})), Admission::admitted);
  EXPECT_EQ(admission(limits.identify(2, Caller{"bob", false})), Admission::admitted);
  EXPECT_EQ(admission(limits.identify(3, Caller{"bob", false})), Admission::over_per_caller);
  EXPECT_EQ(limits.open_from("10.0.0.1"), 1u) << "refused, it counts as it did";
  EXPECT_EQ(admission(limits.identify(3, Caller{"alice", false})), Admission::admitted) << "another user is not bob";
  for (ConnectionLimits::Id id : {4, 5, 6}) {
    limits.admit(id, "10.0.0.2");
    limits.waiting(id, false);
    EXPECT_EQ(admission(limits.identify(id, Caller{"join", true})), Admission::admitted);
  }
  EXPECT_EQ(limits.open_as("join"), 3u);
  // A kept-alive connection whose next request carries no token counts as anonymous again.
  EXPECT_EQ(admission(limits.identify(1, std::nullopt)), Admission::admitted);
  EXPECT_EQ(limits.open_as("bob"), 1u);
  EXPECT_EQ(limits.open_from("10.0.0.1"), 1u);
  limits.release(1);
  limits.release(2);
  EXPECT_EQ(limits.open_as("bob"), 0u);
  EXPECT_EQ(limits.open_from("10.0.0.1"), 0u);
}

}  // namespace
}  // namespace trainyard::net
