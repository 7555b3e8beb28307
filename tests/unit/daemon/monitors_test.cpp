// The monitors' decisions on their own: when periodic checks and canaries are due and of which
// nodes, when an attempt is stuck and which nodes it is tested on, and what a failed canary does.
#include "daemon/monitors.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>

#include "daemon/canary.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

struct Watched {
  explicit Watched(MonitorConfig config = {Millis(1000), Millis(5000), 2}) : monitors(config, nodes, clock.monotonic_now()) {}

  std::shared_ptr<FakeAgent> connect(const std::string& name) {
    auto agent = std::make_shared<FakeAgent>();
    nodes.register_agent(HelloMsg{.name = name, .cores = 8}, agent, false);
    return agent;
  }
  Monitors::Due tick(bool canary_running = false, bool queue_waits = false) {
    return monitors.tick(clock.monotonic_now(), [canary_running] { return canary_running; }, queue_waits);
  }
  // The periodic checks due now, whose nodes are then under test as the job manager's would be.
  std::vector<HealthCheckRequest> start_periodic(bool queue_waits = false) {
    std::vector<HealthCheckRequest> due = tick(false, queue_waits).periodic_checks;
    for (const auto& check : due) under_test.insert(check.nodes.begin(), check.nodes.end());
    return due;
  }
  void finish(const HealthCheckRequest& check) {
    for (const auto& node : check.nodes) under_test.erase(node);
  }

  ManualTimeSource clock{test_epoch()};
  scheduler::Scheduler scheduler{scheduler::Config{}};
  std::set<std::string> under_test;
  NodeRegistry nodes{clock, scheduler, [this](const std::string& node) { return under_test.contains(node); }};
  Monitors monitors;
};

Job simulated_job(int stuck_after_s) {
  Job job;
  job.id = 4;
  job.spec.kind = JobKind::simulated;
  job.spec.stuck_after_s = stuck_after_s;
  return job;
}

Attempt attempt_on(std::vector<std::string> nodes) {
  Attempt attempt;
  attempt.id = 9;
  attempt.job_id = 4;
  attempt.nodes = std::move(nodes);
  attempt.failure_class = "system";
  return attempt;
}

TEST(Monitors, PeriodicCheckIsDueOncePerIntervalOfTheIdleNodesInService) {
  Watched w;
  w.connect("n1");
  w.connect("n2");
  w.connect("n3");
  w.connect("n4");
  w.nodes.drain("n2", "maintenance");
  w.nodes.hold(1, {"n3"}, 8);
  w.under_test.insert("n4");
  EXPECT_TRUE(w.tick().periodic_checks.empty()) << "not before its first interval";
  w.clock.advance(Millis(1000));
  const auto due = w.tick();
  ASSERT_EQ(due.periodic_checks.size(), 1u);
  EXPECT_EQ(due.periodic_checks[0].kind, HealthCheckKind::periodic);
  EXPECT_EQ(due.periodic_checks[0].nodes, std::vector<std::string>{"n1"});
  EXPECT_FALSE(due.periodic_checks[0].collective) << "one node has no collective to test";
  EXPECT_TRUE(w.tick().periodic_checks.empty()) << "once per interval";
}

TEST(Monitors, TheFirstCheckRunsEarlyOnceThreeIdleNodesCompareInPairsAndOnlyOnce) {
  Watched w(MonitorConfig{.periodic_check_interval = Millis(3'600'000), .first_comparison_after = Millis(60'000)});
  w.connect("n1");
  w.connect("n2");
  w.connect("n3");
  w.under_test.insert("n3");  // its registration check
  w.clock.advance(Millis(59'999));
  EXPECT_TRUE(w.tick().periodic_checks.empty()) << "not before the first comparison's delay";
  w.clock.advance(Millis(1));
  EXPECT_TRUE(w.tick().periodic_checks.empty()) << "two idle nodes have no pairs to compare: the check waits its interval";
  w.under_test.erase("n3");
  const auto due = w.tick();
  ASSERT_EQ(due.periodic_checks.size(), 1u) << "three idle nodes now";
  EXPECT_EQ(due.periodic_checks[0].kind, HealthCheckKind::periodic);
  EXPECT_EQ(due.periodic_checks[0].nodes, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_TRUE(due.periodic_checks[0].collective);
  w.clock.advance(Millis(60'000));
  EXPECT_TRUE(w.tick().periodic_checks.empty()) << "after the first comparison, checks keep their interval";
  w.clock.advance(Millis(3'540'000));
  EXPECT_EQ(w.tick().periodic_checks.size(), 1u) << "an interval after the early one";
}

TEST(Monitors, WithoutAFirstComparisonDelayTheFirstCheckWaitsItsInterval) {
  Watched w(MonitorConfig{.periodic_check_interval = Millis(3'600'000)});
  w.connect("n1");
  w.connect("n2");
  w.connect("n3");
  w.clock.advance(Millis(3'599'999));
  EXPECT_TRUE(w.tick().periodic_checks.empty());
  w.clock.advance(Millis(1));
  EXPECT_EQ(w.tick().periodic_checks.size(), 1u);
}

std::string numbered(int i) {
  char name[16];
  std::snprintf(name, sizeof name, "n%04d", i);
  return name;
}

// Issue 54: the first check of a 19,400-node fleet took every idle node at once. Now the fleet is
// checked group by group, each group once per interval, one group's worth of the share at a time.
TEST(Monitors, AFleetIsCheckedInStableGroupsSpreadOverTheIntervalEachNodeOnce) {
  Watched w(MonitorConfig{.periodic_check_interval = Millis(13'000), .first_comparison_after = Millis(1000),
                          .group_size = 16, .max_checking_share = 0.1});
  for (int i = 0; i < 200; ++i) w.connect(numbered(i));  // 13 groups: 8 of 15 nodes, 5 of 16; one due a second
  w.clock.advance(Millis(1000));
  std::vector<HealthCheckRequest> first = w.start_periodic();
  ASSERT_EQ(first.size(), 1u) << "the first check starts the rotation: one group, not the fleet";
  std::vector<std::string> expected;
  for (int i = 0; i < 16; ++i) expected.push_back(numbered(i));
  EXPECT_EQ(first[0].nodes, expected) << "the first group: the first names in order";
  EXPECT_TRUE(first[0].collective);
  EXPECT_TRUE(w.start_periodic().empty()) << "the next group is due a second later";
  w.clock.advance(Millis(1000));
  EXPECT_TRUE(w.start_periodic().empty()) << "20 nodes (10% of 200) may be under periodic checks: the next group waits";
  w.finish(first[0]);
  std::map<std::string, int> checked;
  for (const auto& node : first[0].nodes) ++checked[node];
  for (int second = 0; second < 12; ++second) {
    const std::vector<HealthCheckRequest> due = w.start_periodic();
    ASSERT_EQ(due.size(), 1u) << "second " << second;
    EXPECT_LE(due[0].nodes.size(), 16u);
    EXPECT_GE(due[0].nodes.size(), 15u);
    for (const auto& node : due[0].nodes) ++checked[node];
    w.finish(due[0]);
    w.clock.advance(Millis(1000));
  }
  EXPECT_EQ(checked.size(), 200u) << "every node in one interval";
  for (const auto& [node, times] : checked) EXPECT_EQ(times, 1) << node;
  const std::vector<HealthCheckRequest> again = w.start_periodic();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].nodes, expected) << "the next interval begins again with the same first group";
}

TEST(Monitors, AtMostTheShareOfIdleNodesIsUnderPeriodicChecksAndAHeldBackRotationCatchesUpWithinIt) {
  Watched w(MonitorConfig{.periodic_check_interval = Millis(63'000), .group_size = 16, .max_checking_share = 0.1});
  for (int i = 0; i < 1000; ++i) w.connect(numbered(i));  // 63 groups of 15 or 16, one due a second
  w.clock.advance(Millis(63'000));
  std::size_t starts = 0;
  for (int second = 0; second < 30; ++second) {
    starts += w.start_periodic().size();
    EXPECT_LE(w.under_test.size(), 100u) << "10% of 1,000 idle nodes, at second " << second;
    w.clock.advance(Millis(1000));
  }
  EXPECT_EQ(starts, 6u) << "six groups fit in 100 nodes; none finished, so no seventh";
  w.under_test.clear();
  w.clock.advance(Millis(1000));
  EXPECT_EQ(w.start_periodic().size(), 6u) << "the groups that fell behind start at once, within the share";
}

TEST(Monitors, NoPeriodicCheckStartsWhileAJobWaitsForNodes) {
  Watched w(MonitorConfig{.periodic_check_interval = Millis(1000)});
  w.connect("n1");
  w.connect("n2");
  w.clock.advance(Millis(1000));
  EXPECT_TRUE(w.start_periodic(/*queue_waits=*/true).empty()) << "a job that fits waits for no periodic check";
  const auto due = w.start_periodic(/*queue_waits=*/false);
  ASSERT_EQ(due.size(), 1u) << "once the queue no longer waits, the group that was due starts";
  EXPECT_EQ(due[0].nodes, (std::vector<std::string>{"n1", "n2"}));
}

TEST(Monitors, NothingIsDueWhenTheIntervalsAreZero) {
  Watched w(MonitorConfig{Millis(0), Millis(0), 2});
  w.connect("n1");
  w.clock.advance(Millis(100000));
  const auto due = w.tick();
  EXPECT_TRUE(due.periodic_checks.empty());
  EXPECT_FALSE(due.canary);
}

TEST(Monitors, CanaryIsSizedToTheReadyNodesAndSkippedWhileOneRuns) {
  Watched w;
  w.clock.advance(Millis(5000));
  EXPECT_FALSE(w.tick().canary) << "no node is ready";
  w.connect("n1");
  w.clock.advance(Millis(5000));
  auto due = w.tick(/*canary_running=*/true);
  EXPECT_FALSE(due.canary);
  w.clock.advance(Millis(5000));
  due = w.tick();
  ASSERT_TRUE(due.canary);
  EXPECT_EQ(due.canary->nodes, 1);
  w.connect("n2");
  w.connect("n3");
  w.clock.advance(Millis(5000));
  due = w.tick();
  ASSERT_TRUE(due.canary);
  EXPECT_EQ(due.canary->nodes, 2) << "canary_nodes caps it";
}

TEST(Monitors, ACanaryAskedForNowSaysWhyNotAndMovesTheScheduleOn) {
  Watched w;  // a canary every 5 s
  EXPECT_EQ(w.monitors.next_canary(), w.clock.monotonic_now() + Millis(5000));
  const auto none_ready = w.monitors.canary_now(w.clock.monotonic_now(), false);
  ASSERT_FALSE(none_ready);
  EXPECT_NE(none_ready.error().message.find("no node is ready"), std::string::npos) << none_ready.error().message;
  w.connect("n1");
  w.connect("n2");
  const auto running = w.monitors.canary_now(w.clock.monotonic_now(), true);
  ASSERT_FALSE(running);
  EXPECT_NE(running.error().message.find("running already"), std::string::npos);
  w.clock.advance(Millis(3000));
  const auto now = w.monitors.canary_now(w.clock.monotonic_now(), false);
  ASSERT_TRUE(now);
  EXPECT_EQ(now->nodes, 2);
  EXPECT_EQ(w.monitors.next_canary(), w.clock.monotonic_now() + Millis(5000)) << "the next one an interval after";
  w.clock.advance(Millis(2000));
  EXPECT_FALSE(w.tick().canary) << "not due at the old time";
  EXPECT_FALSE(Watched(MonitorConfig{Millis(0), Millis(0), 2}).monitors.next_canary()) << "canaries off";
}

TEST(Monitors, WhetherACanaryRunsIsAskedOnlyWhenOneIsDue) {
  Watched w;
  int asked = 0;
  w.monitors.tick(w.clock.monotonic_now(), [&] {
    ++asked;
    return false;
  });
  EXPECT_EQ(asked, 0);
  w.clock.advance(Millis(5000));
  w.monitors.tick(w.clock.monotonic_now(), [&] {
    ++asked;
    return false;
  });
  EXPECT_EQ(asked, 1);
}

TEST(Monitors, ACommandJobThatReportsNoStepsAndNeverPrintedIsJudgedOnlyWithStuckAfter) {
  Job job = simulated_job(10);
  job.spec.kind = JobKind::command;
  job.spec.stuck_after_s.reset();
  const MonoTime start{};
  std::vector<RankState> ranks(2);
  EXPECT_FALSE(Monitors::stuck(job, attempt_on({"n1", "n2"}), ranks, start + std::chrono::hours(1)))
      << "an agent that says nothing of idleness";
  for (auto& rank : ranks) rank.active_at = start;
  EXPECT_FALSE(Monitors::stuck(job, attempt_on({"n1", "n2"}), ranks, start + std::chrono::hours(1)))
      << "idle, but never printed: a `sleep` has no pace to be judged by";
  job.spec.stuck_after_s = 600;
  const auto stuck = Monitors::stuck(job, attempt_on({"n1", "n2"}), ranks, start + std::chrono::seconds(601));
  ASSERT_TRUE(stuck);
  EXPECT_NE(stuck->text.find("no output, CPU or I/O for 600s"), std::string::npos) << stuck->text;
}

// At the default 5 s heartbeat a hang a few seconds into training leaves the output's pace unlearned:
// where the ranks are still shows it, and then the floor applies.
TEST(Monitors, AnIdleRankWhosePaceIsUnlearnedGetsTheFloorWhenWhereItIsShowsAHang) {
  Job job = simulated_job(10);
  job.spec.kind = JobKind::command;
  job.spec.stuck_after_s.reset();
  const Attempt attempt = attempt_on({"n1", "n2"});
  std::vector<RankState> ranks(2);
  const MonoTime start{};
  for (auto& rank : ranks) {
    rank.log_bytes = 500;
    rank.active_at = start;
  }
  const MonoTime later = start + std::chrono::seconds(31);
  EXPECT_FALSE(Monitors::stuck(job, attempt, ranks, later)) << "no evidence: the unlearned 10 minutes";
  ranks[0].where = {{0, 8, "S", "", "/usr/lib/python3/dist-packages/torch/autograd/__init__.py:200 in backward\n/t.py:9 in <module>"}};
  ranks[1].where = {{1, 9, "S", "", "/home/u/t.py:17 in load_batch\n/home/u/t.py:40 in <module>"}};
  auto stuck = Monitors::stuck(job, attempt, ranks, later);
  ASSERT_TRUE(stuck);
  EXPECT_EQ(stuck->culprits, std::vector<int>{1});
  EXPECT_NE(stuck->text.find("idles in its own code while others wait on it: 30s"), std::string::npos) << stuck->text;
  ranks[1].where = {{1, 9, "T", "", ""}};
  stuck = Monitors::stuck(job, attempt, ranks, later);
  ASSERT_TRUE(stuck);
  EXPECT_NE(stuck->text.find("rank 1 (n2) stopped"), std::string::npos) << stuck->text;
  ranks[0].where.clear();  // nobody waits on a rank asleep in its own code: a script's own sleep
  ranks[1].where = {{1, 9, "S", "", "/home/u/t.py:17 in load_batch\n/home/u/t.py:40 in <module>"}};
  EXPECT_FALSE(Monitors::stuck(job, attempt, ranks, later));
}

TEST(Monitors, ACommandJobThatReportsNoStepsIsJudgedOnItsIdlenessAgainstItsOutputsPace) {
  Job job = simulated_job(10);
  job.spec.kind = JobKind::command;
  job.spec.stuck_after_s.reset();
  const Attempt attempt = attempt_on({"n1", "n2"});
  std::vector<RankState> ranks(2);
  MonoTime t{};
  // Both ranks print a line every 0.2 s for 20 s, then go idle.
  for (int line = 1; line <= 100; ++line) {
    t += std::chrono::milliseconds(200);
    for (auto& rank : ranks) {
      rank.log_bytes = line * 40;
      rank.output_pace.note_advance(t);
      rank.active_at = t;
    }
  }
  EXPECT_FALSE(Monitors::stuck(job, attempt, ranks, t + std::chrono::seconds(29)));
  ranks[0].active_at = t + std::chrono::seconds(20);  // still working, silently: a checkpoint write
  const auto stuck = Monitors::stuck(job, attempt, ranks, t + std::chrono::seconds(30));
  ASSERT_TRUE(stuck) << "found at max(5 x 0.2 s, 30 s) of idleness";
  EXPECT_EQ(stuck->culprits, std::vector<int>{1});
  EXPECT_NE(stuck->text.find("learned: 5 x its p99 output interval of 0.2s"), std::string::npos) << stuck->text;
  EXPECT_NE(stuck->text.find("rank 0 (n1) still active"), std::string::npos) << stuck->text;
  ranks[1].progress_step = 3;  // a job that reports steps keeps the step rule
  ranks[1].progress_at = t + std::chrono::seconds(29);
  EXPECT_FALSE(Monitors::stuck(job, attempt, ranks, t + std::chrono::seconds(30)));
}

TEST(Monitors, AnAttemptWhoseRanksStoppedAdvancingIsStuckAndNamesTheHungRank) {
  const MonoTime start{};
  std::vector<RankState> ranks(2);
  ranks[0].progress_step = 12;
  ranks[0].phase = "all-reduce";
  ranks[1].progress_step = 11;
  ranks[1].phase = "forward";
  const Attempt attempt = attempt_on({"n1", "n2"});
  EXPECT_FALSE(Monitors::stuck(simulated_job(10), attempt, ranks, start + std::chrono::seconds(9)));
  const auto stuck = Monitors::stuck(simulated_job(10), attempt, ranks, start + std::chrono::seconds(11));
  ASSERT_TRUE(stuck);
  EXPECT_EQ(stuck->culprits, std::vector<int>{1});
  ranks[0].progress_at = start + std::chrono::seconds(5);
  const auto alone = Monitors::stuck(simulated_job(10), attempt, ranks, start + std::chrono::seconds(11));
  ASSERT_TRUE(alone) << "a rank that stops is stuck though another advances";
  EXPECT_EQ(alone->culprits, std::vector<int>{1});
  EXPECT_NE(alone->text.find("rank 0 (n1) still advancing"), std::string::npos) << alone->text;
  ranks[1].progress_at = start + std::chrono::seconds(2);
  EXPECT_FALSE(Monitors::stuck(simulated_job(10), attempt, ranks, start + std::chrono::seconds(11)))
      << "every rank advanced within stuck_after_s";
}

TEST(Monitors, WithoutStuckAfterARankIsJudgedByWhatItsOwnStepsTaught) {
  Job job = simulated_job(10);
  job.spec.stuck_after_s.reset();
  const Attempt attempt = attempt_on({"n1", "n2"});
  std::vector<RankState> ranks(2);
  MonoTime t{};
  // Both ranks step every 0.2 s for 20 s; then rank 1 freezes in forward while rank 0 waits.
  for (int step = 1; step <= 100; ++step) {
    t += std::chrono::milliseconds(200);
    for (auto& rank : ranks) {
      rank.phase = "forward";
      rank.pace.note_phase(rank.phase);
      rank.progress_step = step;
      rank.progress_at = t;
      rank.pace.note_advance(t);
    }
  }
  ranks[0].phase = "all-reduce";
  EXPECT_FALSE(Monitors::stuck(job, attempt, ranks, t + std::chrono::seconds(29)));
  const auto stuck = Monitors::stuck(job, attempt, ranks, t + std::chrono::seconds(30));
  ASSERT_TRUE(stuck) << "found at max(5 x 0.2 s, 30 s), not after 30 minutes";
  EXPECT_EQ(stuck->culprits, std::vector<int>{1});
  EXPECT_NE(stuck->text.find("rank 1 (n2) blocked in forward at step 100"), std::string::npos) << stuck->text;
  EXPECT_NE(stuck->text.find("learned: 5 x its p99 step interval of 0.2s"), std::string::npos) << stuck->text;
}

TEST(Monitors, ACommandJobsRankThatNeverReportedIsNotJudged) {
  // Only rank 0 of this command job writes a progress file.
  Job job = simulated_job(10);
  job.spec.kind = JobKind::command;
  std::vector<RankState> ranks(2);
  const MonoTime start{};
  ranks[0].progress_step = 3;
  ranks[0].progress_at = start + std::chrono::seconds(50);
  EXPECT_FALSE(Monitors::stuck(job, attempt_on({"n1", "n2"}), ranks, start + std::chrono::seconds(55)));
  EXPECT_TRUE(Monitors::stuck(job, attempt_on({"n1", "n2"}), ranks, start + std::chrono::seconds(61)));
}

TEST(Monitors, StuckNodesAreTestedOnceEachIfConnectedAndNotUnderTest) {
  Watched w;
  w.connect("n1");
  w.connect("n2");
  w.connect("n3");
  const Attempt attempt = attempt_on({"n1", "n1", "n2", "n3", "n4"});
  w.under_test.insert("n3");
  const auto check = w.monitors.stuck_nodes_check(simulated_job(10), attempt, {0, 1, 2, 3, 4});
  ASSERT_TRUE(check);
  EXPECT_EQ(check->kind, HealthCheckKind::after_stuck);
  EXPECT_EQ(check->nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_TRUE(check->collective);
  EXPECT_EQ(check->requested_by, "job 4");
  EXPECT_FALSE(w.monitors.stuck_nodes_check(simulated_job(10), attempt, {3, 4}));
  // An array's task is named as people name it, not by its internal id.
  Job task = simulated_job(10);
  task.array_task = ArrayTask{.array_job = 2, .index = 1};
  EXPECT_EQ(w.monitors.stuck_nodes_check(task, attempt, {0})->requested_by, "job 2_1");
}

TEST(Monitors, AFailedCanaryMakesItsHealthyNodesSuspect) {
  Watched w;
  w.connect("n1");
  w.connect("n2");
  w.nodes.drain("n2", "maintenance");
  Job canary = simulated_job(10);
  canary.user = kCanaryUser;
  store::Change change;
  const auto suspects = w.monitors.suspect_canary_nodes(canary, attempt_on({"n1", "n2"}), std::vector<RankState>(2), change);
  EXPECT_EQ(suspects, std::vector<std::string>{"n1"}) << "a drained node keeps its state";
  EXPECT_EQ(w.nodes.find("n1")->node.state, NodeState::suspect);
  ASSERT_EQ(change.events.size(), 1u);
  EXPECT_EQ(change.events[0].kind, "node.suspect");
  EXPECT_EQ(change.events[0].details["canary_job"], 4);
}

TEST(Monitors, WhenACanaryLostANodeOnlyTheLostNodeIsSuspect) {
  Watched w;
  w.connect("n1");
  w.connect("n2");
  std::vector<RankState> ranks(2);
  ranks[1].lost = true;
  store::Change change;
  const auto suspects = w.monitors.suspect_canary_nodes(simulated_job(10), attempt_on({"n1", "n2"}), ranks, change);
  EXPECT_EQ(suspects, std::vector<std::string>{"n2"});
  EXPECT_EQ(w.nodes.find("n1")->node.state, NodeState::healthy);
}

TEST(Monitors, TheCanaryCheckSkipsNodesAlreadyUnderTest) {
  Watched w;
  w.connect("n1");
  w.connect("n2");
  w.under_test.insert("n2");
  const auto check = w.monitors.canary_check(4, {"n1", "n2", "gone"});
  ASSERT_TRUE(check);
  EXPECT_EQ(check->kind, HealthCheckKind::after_canary);
  EXPECT_EQ(check->nodes, std::vector<std::string>{"n1"});
  EXPECT_EQ(check->requested_by, "canary job 4");
  w.under_test.insert("n1");
  EXPECT_FALSE(w.monitors.canary_check(4, {"n1", "n2"}));
}

}  // namespace
}  // namespace trainyard::daemon::testing
