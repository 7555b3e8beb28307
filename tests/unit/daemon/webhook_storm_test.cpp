// Storm control: at most max_per_minute messages a window, the excess folded, nothing dropped.
#include <gtest/gtest.h>

#include "daemon/webhooks/webhook_storm.h"

namespace trainyard::daemon {
namespace {

using namespace std::chrono_literals;
using Action = StormGate::Action;

const TimePoint kStart = from_unix_ms(1'700'000'000'000);

// Plays `pending` events that all arrived at `kStart` through the gate; returns the messages sent
// (1 for an event, the size of a fold) with their times.
std::vector<std::pair<TimePoint, std::size_t>> drain(StormGate& gate, std::size_t pending, TimePoint now) {
  std::vector<std::pair<TimePoint, std::size_t>> sent;
  while (pending > 0) {
    const StormGate::Step step = gate.next(pending, now);
    if (step.action == Action::wait) {
      EXPECT_GT(step.until, now);
      now = step.until;
      continue;
    }
    const std::size_t covered = step.action == Action::fold_all ? pending : 1;
    sent.emplace_back(now, covered);
    pending -= covered;
    gate.sent(now);
  }
  return sent;
}

TEST(StormGate, TwoHundredFailuresBecomeNineteenMessagesAndOneSummary) {
  StormGate gate(StormPolicy{});
  const auto sent = drain(gate, 200, kStart);
  ASSERT_EQ(sent.size(), 20u);
  for (int i = 0; i < 19; ++i) EXPECT_EQ(sent[i], std::make_pair(kStart, std::size_t{1}));
  EXPECT_EQ(sent[19], std::make_pair(kStart + 1min, std::size_t{181}));
}

TEST(StormGate, QuietTrafficIsNeverHeldBack) {
  StormGate gate(StormPolicy{});
  for (int i = 0; i < 100; ++i) {
    const TimePoint now = kStart + i * 4s;  // 15 a minute
    EXPECT_EQ(gate.next(1, now).action, Action::send_one) << i;
    gate.sent(now);
  }
}

TEST(StormGate, NoWindowEverCarriesMoreThanTheLimit) {
  StormGate gate(StormPolicy{5, 1min});
  std::vector<TimePoint> times;
  TimePoint now = kStart;
  std::size_t pending = 0;
  // One event every second for ten minutes, each handled as soon as the gate allows.
  for (int second = 0; second < 600; ++second, now += 1s) {
    ++pending;
    for (;;) {
      const auto step = gate.next(pending, now);
      if (step.action == Action::wait) break;
      pending -= step.action == Action::fold_all ? pending : 1;
      times.push_back(now);
      gate.sent(now);
      if (pending == 0) break;
    }
  }
  for (std::size_t i = 0; i + 5 < times.size(); ++i) EXPECT_GE(times[i + 5] - times[i], 1min) << i;
  EXPECT_LT(pending, 61u);  // what waits is at most the current window's excess
}

TEST(StormGate, AFailureGoesOutAtOnceFromItsReserveFoldingWhatWaitedBeforeIt) {
  StormGate gate(StormPolicy{.max_per_minute = 3, .window = 1min, .failure_reserve = 2});
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(gate.next(5, kStart).action, Action::send_one);
    gate.sent(kStart);
  }
  EXPECT_EQ(gate.next(3, kStart).action, Action::wait) << "no failure waits";
  const StormGate::Step fold = gate.next(3, kStart + 1s, 2);
  EXPECT_EQ(fold.action, Action::fold_through);
  EXPECT_EQ(fold.count, 3u) << "the failure and the two before it";
  gate.sent(kStart + 1s);
  EXPECT_EQ(gate.next(1, kStart + 2s, 0).action, Action::send_one) << "a failure at the head goes alone";
  gate.sent(kStart + 2s);
  EXPECT_FALSE(gate.failure_reserve_left());
  EXPECT_EQ(gate.next(1, kStart + 3s, 0).action, Action::wait) << "the reserve is spent";
  // A new window brings the reserve back.
  EXPECT_EQ(gate.next(1, kStart + 1min, 0).action, Action::send_one);
  gate.sent(kStart + 1min);
  EXPECT_TRUE(gate.failure_reserve_left());
}

TEST(StormGate, FailuresAreWhatSomeoneMustActOn) {
  for (const char* kind : {"job.failed", "job.stuck", "node.down", "node.unhealthy", "canary.failed"}) {
    EXPECT_TRUE(is_failure_event(kind)) << kind;
  }
  for (const char* kind : {"node.healthy", "job.succeeded", "healthcheck.finished", "job.failed.x", "job"}) {
    EXPECT_FALSE(is_failure_event(kind)) << kind;
  }
}

TEST(StormGate, OnePerMinuteFoldsWhatWaitsIntoTheOneMessage) {
  StormGate gate(StormPolicy{1, 1min});
  EXPECT_EQ(drain(gate, 3, kStart), (std::vector<std::pair<TimePoint, std::size_t>>{{kStart, 3}}));
  EXPECT_EQ(gate.next(1, kStart + 1s).action, Action::wait);
  EXPECT_EQ(gate.next(1, kStart + 1min).action, Action::send_one);
}

}  // namespace
}  // namespace trainyard::daemon
