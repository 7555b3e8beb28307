// The job manager restarted over a store a crashed daemon left: restored attempts, agents that
// report them again, and agents that no longer run them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>

#include "tests/unit/daemon/job_manager_helpers.h"

namespace trainyard::daemon::testing {
namespace {

// The store as a crashed daemon left it: one job RUNNING on n1 and n2.
store::LoadedState crashed_with_running_job(TimePoint at) {
  store::LoadedState state;
  for (const std::string name : {"n1", "n2"}) {
    Node node;
    node.name = name;
    node.cores = 8;
    node.connected = true;
    node.data_addr = name + ":7000";
    state.nodes.push_back(node);
  }
  Job job;
  job.id = 7;
  job.spec = command_spec(2, 1);
  job.user = "alice";
  job.state = JobState::running;
  job.submitted_at = at;
  job.started_at = at;
  job.attempts = 1;
  state.active_jobs.push_back(job);
  Attempt attempt;
  attempt.id = 11;
  attempt.job_id = 7;
  attempt.nodes = {"n1", "n2"};
  attempt.cores_per_node = 8;
  attempt.state = AttemptState::running;
  attempt.created_at = at;
  attempt.started_at = at;
  state.active_attempts.push_back(attempt);
  state.max_job_id = 7;
  state.max_attempt_id = 11;
  return state;
}

// Stores what `state` describes, so the restored daemon's later upserts have their records.
void seed(Cluster& c, const store::LoadedState& state) {
  store::Change change;
  change.jobs = state.active_jobs;
  change.attempts = state.active_attempts;
  change.nodes = state.nodes;
  c.memory.commit(std::span<const store::Change>(&change, 1));
}

// Both agents report `report` every second for `seconds`, and the daemon ticks as it does live.
void report_every_second(Cluster& c, const AttemptReport& report, int seconds) {
  for (int i = 0; i < seconds; ++i) {
    c.advance(Millis(1000));
    c.heartbeat("n1", {report});
    c.heartbeat("n2", {report});
    c.jobs.tick();
    c.settle();
  }
}

// Both agents of the restored job come back listing `report`, then heartbeat it for 5 s.
void reconnect_and_report_for_5s(Cluster& c, const AttemptReport& report) {
  c.connect("n1", 8, {report});
  c.connect("n2", 8, {report});
  report_every_second(c, report, 5);
}

TEST(JobManagerRestore, ReconnectingAgentsThatListTheAttemptKeepItRunning) {
  Cluster c;
  const store::LoadedState state = crashed_with_running_job(c.clock.system_now() - Millis(60000));
  seed(c, state);
  c.jobs.restore(state);
  c.settle();
  const AttemptReport report{11, 7, 40, std::nullopt, "forward"};
  reconnect_and_report_for_5s(c, report);
  EXPECT_TRUE(c.agents["n1"]->kills().empty());
  EXPECT_TRUE(c.agents["n2"]->kills().empty());
  EXPECT_EQ(c.jobs.active_job(7)->state, JobState::running);
  EXPECT_TRUE(c.launches().empty()) << "the running attempt was launched a second time";
  c.exited("n1", 11, 0);
  c.exited("n2", 11, 0);
  EXPECT_EQ(c.stored_job(7)->state, JobState::succeeded);
  const Job next = c.submit(command_spec(1));
  EXPECT_EQ(next.id, 8) << "ids continue after the stored maximum";
}

TEST(JobManagerRestore, ARestoredAttemptIsNotJudgedStuckFromBeforeTheRestart) {
  Cluster c;
  store::LoadedState state = crashed_with_running_job(c.clock.system_now() - Millis(10000));
  state.active_jobs[0].spec.kind = JobKind::simulated;  // always under stuck watch
  state.active_jobs[0].spec.stuck_after_s = 60;
  state.active_attempts[0].last_step = 77;
  seed(c, state);
  c.jobs.restore(state);
  c.settle();
  c.advance(Millis(2));
  c.jobs.tick();  // before any agent is back, as a real restart's first tick is
  c.settle();
  const AttemptReport report{11, 7, 78, std::nullopt, "forward"};
  reconnect_and_report_for_5s(c, report);
  EXPECT_TRUE(c.agents["n1"]->kills().empty()) << "a healthy attempt was killed after the restart";
  EXPECT_EQ(c.jobs.active_job(7)->state, JobState::running);
  EXPECT_EQ(c.stored_attempts(7).back().diagnosis, "");
  // A rank that really stops is still caught, a whole stuck_after_s after its last advance.
  report_every_second(c, report, 61);
  EXPECT_EQ(c.agents["n1"]->kills().size(), 1u);
  EXPECT_NE(c.stored_attempts(7).back().diagnosis, "");
}

TEST(JobManagerRestore, AgentThatNoLongerRunsTheAttemptLosesItsRankAfterTheGrace) {
  Cluster c;
  const store::LoadedState state = crashed_with_running_job(c.clock.system_now() - Millis(60000));
  seed(c, state);
  c.jobs.restore(state);
  c.settle();
  c.connect("n1", 8, {AttemptReport{11, 7, 40, std::nullopt, "forward"}});
  c.connect("n2");  // restarted: it runs nothing
  c.advance(Millis(2000));  // the grace is two heartbeat intervals
  c.jobs.tick();
  c.settle();
  EXPECT_TRUE(c.agents["n1"]->kills().empty()) << "killed within the grace";
  c.advance(Millis(1));
  c.heartbeat("n1", {AttemptReport{11, 7, 41, std::nullopt, "forward"}});
  c.heartbeat("n2");
  c.jobs.tick();
  c.settle();
  ASSERT_EQ(c.agents["n1"]->kills().size(), 1u) << "the rank that survived is stopped";
  EXPECT_EQ(c.agents["n1"]->kills()[0].attempt_id, 11);
  c.exited("n1", 11, std::nullopt, SIGTERM, "killed");
  const Attempt attempt = c.stored_attempts(7).back();
  EXPECT_EQ(attempt.failure_class, "node_lost");
  EXPECT_TRUE(attempt.infrastructure);
  const Job* job = c.jobs.active_job(7);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->state, JobState::pending) << "retried as an infrastructure failure";
}

// The crash came after every rank started but before the RUNNING transition was stored: the agents'
// hellos are the only news that the ranks run, so they must complete the transition.
TEST(JobManagerRestore, StartingAttemptThatEveryAgentReportsBecomesRunning) {
  Cluster c;
  store::LoadedState state = crashed_with_running_job(c.clock.system_now() - Millis(60000));
  state.active_jobs[0].state = JobState::starting;
  state.active_attempts[0].state = AttemptState::starting;
  state.active_attempts[0].started_at.reset();
  seed(c, state);
  c.jobs.restore(state);
  c.settle();
  const AttemptReport report{11, 7, 3, std::nullopt, "forward"};
  c.connect("n1", 8, {report});
  EXPECT_EQ(c.jobs.active_job(7)->state, JobState::starting) << "running before every rank was confirmed";
  c.connect("n2", 8, {report});
  EXPECT_EQ(c.jobs.active_job(7)->state, JobState::running);
  EXPECT_EQ(c.stored_attempts(7).back().state, AttemptState::running);
  EXPECT_TRUE(c.stored_attempts(7).back().started_at) << "timeout_s counts from started_at";
}

}  // namespace
}  // namespace trainyard::daemon::testing
