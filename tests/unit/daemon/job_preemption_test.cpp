// Checkpoint-aware preemption through the job manager, with fake agents and
// time: the two-share scenario of tests/integration/requeue_test.cpp, minus the processes. A full
// cluster of an over-served share's jobs must make room for an under-served share's job: the
// cheapest whole gang is asked to save, ends PREEMPTED without using an attempt, and resumes from
// the checkpoint it wrote; the waiting job starts on the freed node.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "checkpoint/checkpoint.h"
#include "tests/unit/daemon/job_manager_helpers.h"

namespace trainyard::daemon::testing {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

JobManagerConfig preempting_config(Millis min_run_time) {
  JobManagerConfig config = test_config();
  config.preemption.enabled = true;
  config.preemption.min_run_time = min_run_time;
  return config;
}

JobSpec simulated_in(const std::string& share) {
  JobSpec spec = command_spec(1);
  spec.kind = JobKind::simulated;
  spec.share = share;
  spec.workload.checkpoint_every = 1000;
  return spec;
}

void report_step(Cluster& c, const std::string& node, const LaunchMsg& launch, std::int64_t step) {
  c.heartbeat(node, {AttemptReport{launch.attempt_id, launch.job_id, step, c.clock.system_now(), "forward"}});
}

std::vector<store::Event> events_of(Cluster& c, const std::string& kind) {
  std::vector<store::Event> out;
  for (const store::Event& e : c.memory.events_after(0, 100'000)) {
    if (e.kind == kind) out.push_back(e);
  }
  return out;
}

// Two whole-node jobs of share "big" fill both nodes; n1's has lost fewer steps since its
// checkpoint, so it is the cheaper victim.
struct TwoShares {
  explicit TwoShares(Millis min_run_time = Millis(0)) : TwoShares(preempting_config(min_run_time)) {}
  explicit TwoShares(JobManagerConfig config) : c(std::move(config)) {
    c.connect("n1");
    c.connect("n2");
    first = c.submit(simulated_in("big"));
    second = c.submit(simulated_in("big"));
    for (const auto& [node, launches] : c.launches()) launch_on[node] = launches.at(0);
    EXPECT_EQ(launch_on.size(), 2u) << "the two big jobs did not fill the cluster";
    for (const auto& [node, launch] : launch_on) c.started(node, launch.attempt_id);
    c.advance(Millis(1000));
    report_progress();
  }
  // Heartbeats with the steps each big job has reached: n1's has lost fewer since its checkpoint.
  void report_progress() {
    report_step(c, "n1", launch_on["n1"], 40);
    report_step(c, "n2", launch_on["n2"], 90);
  }
  // Time passes with the agents alive, then the periodic tick (and its scheduling pass) runs.
  void pass_time(Millis by) {
    c.advance(by);
    report_progress();
    c.jobs.tick();
    c.settle();
  }
  Cluster c;
  Job first;
  Job second;
  std::map<std::string, LaunchMsg> launch_on;
};

TEST(JobPreemption, AFullClusterOfAnOverServedShareMakesRoomForAnUnderServedJob) {
  TwoShares s;
  Cluster& c = s.c;
  const Job urgent = c.submit(simulated_in("urgent"));
  c.advance(Millis(500));

  const auto kills = c.agents["n1"]->kills();
  ASSERT_EQ(kills.size(), 1u) << "no preemption planned on a full cluster";
  EXPECT_TRUE(kills[0].checkpoint) << "a victim saves before it stops";
  EXPECT_TRUE(c.agents["n2"]->kills().empty()) << "more than one whole gang stopped, or not the cheapest";
  ASSERT_EQ(events_of(c, "job.waiting_on_preemption").size(), 1u);
  EXPECT_EQ(events_of(c, "job.waiting_on_preemption")[0].job_id, urgent.id);

  const LaunchMsg victim = s.launch_on["n1"];
  report_checkpoint(c, "n1", victim, 41);  // what the stop wrote
  c.exited("n1", victim.attempt_id, std::nullopt, 15, "preempted (stopped at step 41)");

  const auto attempts = c.stored_attempts(victim.job_id);
  ASSERT_FALSE(attempts.empty());
  EXPECT_EQ(attempts[0].state, AttemptState::preempted);
  EXPECT_EQ(attempts[0].failure_class, "");
  const Job stored = *c.stored_job(victim.job_id);
  EXPECT_EQ(stored.attempts, 0) << "the preemption used one of the victim's attempts";
  EXPECT_EQ(stored.state, JobState::pending);
  const auto preempted = events_of(c, "job.preempted");
  ASSERT_EQ(preempted.size(), 1u);
  EXPECT_EQ(preempted[0].job_id, victim.job_id);

  const auto on_n1 = c.agents["n1"]->launches();
  ASSERT_EQ(on_n1.size(), 2u) << "the urgent job did not take the freed node";
  EXPECT_EQ(on_n1[1].job_id, urgent.id);

  // When the urgent job is done the victim resumes from the checkpoint its stop wrote.
  c.started("n1", on_n1[1].attempt_id);
  c.exited("n1", on_n1[1].attempt_id, 0);
  const auto resumed = c.agents["n1"]->launches();
  ASSERT_EQ(resumed.size(), 3u);
  EXPECT_EQ(resumed[2].job_id, victim.job_id);
  ASSERT_TRUE(resumed[2].resume_from);
  EXPECT_EQ(checkpoint::step_of(*resumed[2].resume_from), 41);
}

TEST(JobPreemption, AGangThatHasNotRunTheMinimumTimeIsNotPreempted) {
  TwoShares s(Millis(60'000));
  Cluster& c = s.c;
  const Job urgent = c.submit(simulated_in("urgent"));
  s.pass_time(Millis(30'000));
  EXPECT_TRUE(c.agents["n1"]->kills().empty() && c.agents["n2"]->kills().empty()) << "preempted before the minimum run time";
  EXPECT_TRUE(events_of(c, "job.waiting_on_preemption").empty());

  s.pass_time(Millis(31'000));
  EXPECT_EQ(c.agents["n1"]->kills().size(), 1u) << "not preempted once the minimum run time had passed";
  EXPECT_THAT(events_of(c, "job.waiting_on_preemption").at(0).message, HasSubstr("share urgent"));
  EXPECT_EQ(events_of(c, "job.waiting_on_preemption").at(0).job_id, urgent.id);
}

TEST(JobPreemption, AStepOfTheWallClockNeitherExposesAGangEarlyNorShieldsIt) {
  TwoShares s(Millis(60'000));
  Cluster& c = s.c;
  c.submit(simulated_in("urgent"));
  c.clock.step_system_clock(Millis(3'600'000));  // an hour ahead: by the wall clock both gangs ran long enough
  s.pass_time(Millis(30'000));
  EXPECT_TRUE(c.agents["n1"]->kills().empty() && c.agents["n2"]->kills().empty())
      << "preempted after 31 s of running because the wall clock jumped";
  c.clock.step_system_clock(Millis(-7'200'000));  // and back, past where it started
  s.pass_time(Millis(31'000));
  EXPECT_EQ(c.agents["n1"]->kills().size(), 1u) << "a wall clock stepped back kept the gang past its minimum run";
}

TEST(JobPreemption, NoGangIsStoppedForRoomTheWaitingJobCouldNotUse) {
  JobManagerConfig config = preempting_config(Millis(0));
  config.disk_policy = {1024, 0};
  TwoShares s(config);
  Cluster& c = s.c;
  // n1's gang is the cheaper victim, but n1 is short of disk: it takes no work, so freeing it would
  // not start the urgent job.
  const LaunchMsg& on_n1 = s.launch_on["n1"];
  c.send("n1", HeartbeatMsg{0, {AttemptReport{on_n1.attempt_id, on_n1.job_id, 40, c.clock.system_now(), "forward"}},
                            {DiskSpace{"work", 50'000, 100'000}, DiskSpace{"checkpoint", 500, 100'000}}});
  ASSERT_EQ(c.jobs.node("n1")->node.state, NodeState::suspect);
  const Job urgent = c.submit(simulated_in("urgent"));
  c.advance(Millis(500));
  EXPECT_TRUE(c.agents["n1"]->kills().empty()) << "stopped a gang on a node the urgent job cannot use";
  ASSERT_EQ(c.agents["n2"]->kills().size(), 1u);
  EXPECT_EQ(c.agents["n2"]->kills()[0].attempt_id, s.launch_on["n2"].attempt_id);
  EXPECT_EQ(events_of(c, "job.waiting_on_preemption").at(0).job_id, urgent.id);
}

}  // namespace
}  // namespace trainyard::daemon::testing
