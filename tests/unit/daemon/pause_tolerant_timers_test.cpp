// Timers that do not act on what the daemon slept through (daemon/pause_tolerant_timers.h), on a
// manual clock: a pause is the clock jumping past a timer's due time before it fires.
#include <gtest/gtest.h>

#include "daemon/nodes/health_checks.h"
#include "daemon/own_pauses.h"
#include "daemon/pause_tolerant_timers.h"
#include "tests/unit/daemon/accelerator_reports.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

struct PausedClock {
  ManualTimeSource clock{test_epoch()};
  FakeTimers inner{clock};
  PauseTolerantTimers timers{inner, clock, pause_threshold(Millis(500))};  // 2 s
};

TEST(PauseTolerantTimers, ATimerThatFiresOnTimeActsAtOnce) {
  PausedClock t;
  int fired = 0;
  t.timers.after(Millis(5000), [&] { ++fired; });
  t.clock.advance(Millis(5000) + Millis(1900));  // late, as a loaded machine is
  t.inner.fire_due();
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(t.timers.held_back(), 0);
}

TEST(PauseTolerantTimers, ATimerThatFellDueDuringAPauseWaitsForWhatArrivedMeanwhile) {
  PausedClock t;
  int fired = 0;
  t.timers.after(Millis(5000), [&] { ++fired; });
  t.clock.advance(Millis(20000));  // paused for 15 s past the due time
  t.inner.fire_due();
  EXPECT_EQ(fired, 0) << "held back once";
  EXPECT_EQ(t.timers.held_back(), 1);
  t.clock.advance(Millis(1999));
  t.inner.fire_due();
  EXPECT_EQ(fired, 0);
  t.clock.advance(Millis(1));
  t.inner.fire_due();
  EXPECT_EQ(fired, 1) << "then it acts";
}

TEST(PauseTolerantTimers, ACancelledTimerStaysSilentAlsoWhenHeldBackAfterAPause) {
  PausedClock t;
  int fired = 0;
  std::unique_ptr<Timer> before_due = t.timers.make();
  before_due->start(Millis(5000), [&] { ++fired; });
  before_due->cancel();
  std::unique_ptr<Timer> held = t.timers.make();
  held->start(Millis(5000), [&] { ++fired; });
  t.clock.advance(Millis(20000));
  t.inner.fire_due();
  ASSERT_EQ(t.timers.held_back(), 1);
  held->cancel();
  t.inner.advance(Millis(5000));
  EXPECT_EQ(fired, 0);
  EXPECT_EQ(t.inner.pending(), 0u);
}

TEST(PauseTolerantTimers, ATimerLeftToItselfFiresOnceAndLetsGoOfItself) {
  PausedClock t;
  int fired = 0;
  t.timers.after(Millis(100), [&] { ++fired; });
  t.inner.advance(Millis(100));
  t.inner.advance(Millis(10000));
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(t.inner.pending(), 0u);
}

// On waking, the task's timeout and the node's result are both ready; the timeout's handler may run
// first. Held back, it finds the task answered.
TEST(PauseTolerantTimers, AHealthResultThatArrivedDuringAPauseIsHeardBeforeTheTaskTimeout) {
  PausedClock t;
  std::vector<HealthCheckMsg> sent;
  HealthCheckConfig config;
  config.task_timeout = Millis(10000);
  HealthChecks checks(
      t.clock, t.timers, config,
      [&](const std::string&, const DaemonMessage& m) {
        if (const auto* msg = std::get_if<HealthCheckMsg>(&m)) sent.push_back(*msg);
        return true;
      },
      [](const std::string&) { return std::nullopt; });
  std::optional<HealthCheckResult> result;
  checks.start(HealthCheckRequest{HealthCheckKind::on_demand, {"n1"}, true, false, "alice"},
               [&](const HealthCheckResult& r) { result = r; });
  ASSERT_EQ(sent.size(), 1u);

  t.clock.advance(Millis(30000));  // the daemon slept through the timeout
  t.inner.fire_due();
  EXPECT_FALSE(result) << "not judged on the pause";
  checks.on_result("n1", HealthResultMsg{sent[0].task_id, passing_report(), ""});
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->passed()) << to_json(*result).dump(2);
  t.clock.advance(Millis(5000));
  t.inner.fire_due();  // the held-back timeout finds the task done
  EXPECT_TRUE(result->passed());
}

TEST(PauseTolerantTimers, ANodeThatStaysSilentAfterThePauseStillTimesOut) {
  PausedClock t;
  HealthCheckConfig config;
  config.task_timeout = Millis(10000);
  HealthChecks checks(
      t.clock, t.timers, config, [](const std::string&, const DaemonMessage&) { return true; },
      [](const std::string&) { return std::nullopt; });
  std::optional<HealthCheckResult> result;
  checks.start(HealthCheckRequest{HealthCheckKind::on_demand, {"n1"}, true, false, "alice"},
               [&](const HealthCheckResult& r) { result = r; });
  t.clock.advance(Millis(30000));
  t.inner.fire_due();
  t.clock.advance(Millis(2000));
  t.inner.fire_due();
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->passed());
  EXPECT_NE(result->errors.at("n1").find("no health result from n1"), std::string::npos);
}

}  // namespace
}  // namespace trainyard::daemon::testing
