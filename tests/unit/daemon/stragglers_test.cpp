// A straggler found by the job manager, with fake agents and fake time: the rank is recorded on
// its attempt and in a job.straggler event, its node stays in service and is health-checked as
// soon as no attempt runs on it (only that check can take it out of service), and with
// replace_stragglers the job is stopped to queue again without that node. The rule itself has its
// own test (straggler_rule_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>

#include "tests/unit/daemon/job_manager_helpers.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

// Every rank reports having done `round` windows of 10 steps; the rank on `slow` spends 3 x 100 ms
// of device time per step, the others 100 ms.
void report_round(Cluster& c, const RunningJob& r, const std::string& slow, int round) {
  for (const auto& node : r.nodes) {
    AttemptReport report{r.attempt, r.job.id, 10 * round, std::nullopt, "forward"};
    report.busy_ms = 10 * round * (node == slow ? 300 : 100);
    c.heartbeat(node, {report});
  }
}

void report_windows(Cluster& c, const RunningJob& r, const std::string& slow, int rounds) {
  for (int round = 0; round <= rounds; ++round) report_round(c, r, slow, round);
}

std::size_t accelerator_checks_sent(const FakeAgent& agent) { return agent.all<HealthCheckMsg>().size(); }

TEST(Stragglers, TheSlowRankIsRecordedAndItsNodeCheckedButNotSuspectedForTheJobsWord) {
  Cluster c;
  connect_nodes(c, 3);
  const RunningJob r = start_job(c, command_spec(3));
  const std::string slow = r.nodes.at(1);
  report_windows(c, r, slow, 2);
  EXPECT_TRUE(c.events_of_kind("job.straggler").empty()) << "two slow windows are not yet three";
  report_round(c, r, slow, 3);

  const auto events = c.events_of_kind("job.straggler");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].node, slow);
  EXPECT_EQ(events[0].details["rank"], 1);
  EXPECT_DOUBLE_EQ(events[0].details["ratio"].get<double>(), 3.0);
  EXPECT_EQ(events[0].details["replace"], false);
  EXPECT_THAT(events[0].message, HasSubstr("rank 1 on " + slow + " takes 3.0x"));
  const auto attempts = c.stored_attempts(r.job.id);
  ASSERT_EQ(attempts[0].stragglers.size(), 1u);
  EXPECT_EQ(attempts[0].stragglers[0].node, slow);
  EXPECT_EQ(attempts[0].stragglers[0].rank, 1);

  EXPECT_THAT(events[0].message, HasSubstr(slow + " is health-checked once no attempt runs on it"));
  for (const auto& node : r.nodes) EXPECT_EQ(c.jobs.node(node)->node.state, NodeState::healthy) << node;
  // Off by default: the attempt runs on, and nothing is stopped.
  for (const auto& node : r.nodes) EXPECT_TRUE(c.agents[node]->kills().empty()) << node;
  EXPECT_TRUE(c.jobs.active_job(r.job.id)->excluded_nodes.empty());
  // Its node is checked once the attempt is over: the suite needs the node to itself.
  EXPECT_EQ(accelerator_checks_sent(*c.agents[slow]), 0u);
  for (const auto& node : r.nodes) c.exited(node, r.attempt, 0);
  ASSERT_EQ(c.stored_job(r.job.id)->state, JobState::succeeded);
  EXPECT_EQ(accelerator_checks_sent(*c.agents[slow]), 1u) << "its node is health-checked";
  for (const auto& node : r.nodes) {
    if (node != slow) {
      EXPECT_EQ(accelerator_checks_sent(*c.agents[node]), 0u) << node;
    }
  }
}

TEST(Stragglers, AStragglersNodeKeepsTakingWorkAndIsCheckedOnceNoAttemptRunsOnIt) {
  Cluster c;
  connect_nodes(c, 2);
  JobSpec paced = command_spec(2);
  paced.cores_per_node = 2;
  const RunningJob r = start_job(c, paced);
  const std::string slow = r.nodes.at(1);
  report_windows(c, r, slow, 3);
  ASSERT_EQ(c.events_of_kind("job.straggler").size(), 1u);

  // Its six idle cores still take work: another user's job needs them on both nodes.
  JobSpec beside = command_spec(2);
  beside.cores_per_node = 6;
  const RunningJob other = start_job(c, beside);
  ASSERT_EQ(other.nodes.size(), 2u);
  EXPECT_EQ(c.jobs.node(slow)->node.state, NodeState::healthy);

  for (const auto& node : r.nodes) c.exited(node, r.attempt, 0);
  EXPECT_EQ(accelerator_checks_sent(*c.agents[slow]), 0u) << "the suite waits for the other job's ranks";
  for (const auto& node : other.nodes) c.exited(node, other.attempt, 0);
  EXPECT_EQ(accelerator_checks_sent(*c.agents[slow]), 1u) << "checked as soon as no attempt runs on it";
  EXPECT_EQ(accelerator_checks_sent(*c.agents[r.nodes.at(0)]), 0u);
}

TEST(Stragglers, WithReplaceStragglersTheJobIsStoppedToQueueAgainWithoutTheNode) {
  Cluster c;
  connect_nodes(c, 3);
  JobSpec spec = command_spec(3);
  spec.replace_stragglers = true;
  const RunningJob r = start_job(c, spec);
  const std::string slow = r.nodes.at(2);
  report_windows(c, r, slow, 3);

  ASSERT_EQ(c.events_of_kind("job.straggler").size(), 1u);
  EXPECT_EQ(c.events_of_kind("job.straggler")[0].details["replace"], true);
  const Job* job = c.jobs.active_job(r.job.id);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->stopping_to, StopIntent::requeue);
  EXPECT_THAT(job->excluded_nodes, ::testing::ElementsAre(slow));
  for (const auto& node : r.nodes) {
    ASSERT_EQ(c.agents[node]->kills().size(), 1u) << node;
    EXPECT_THAT(c.agents[node]->kills()[0].reason, HasSubstr("straggler"));
  }
  for (const auto& node : r.nodes) c.exited(node, r.attempt, std::nullopt, SIGTERM, "killed by the daemon");
  EXPECT_EQ(c.stored_attempts(r.job.id).front().state, AttemptState::requeued);
  EXPECT_EQ(accelerator_checks_sent(*c.agents[slow]), 1u) << "its node is health-checked once its rank is gone";
}

// The straggler's node passed the attempt's pre-flight, so its check is fresher than the spare's: a
// tick that chooses spares between the attempt's end and its resume would prefer it, idle and
// healthy until its own check, to the spare. It must not: the resume left it out and needs the spare.
TEST(Stragglers, AReplacedStragglersNodeIsNotMadeTheSpareItsJobsResumeNeeds) {
  JobManagerConfig config = preflight_config();
  config.recovery.warm_spares = 1;
  Cluster c(config);
  std::map<std::string, std::size_t> answered;
  connect_nodes(c, 4);
  ASSERT_EQ(pass_health_tasks(c, answered), 1) << "the spare is tested as it is chosen";
  c.advance(Millis(1000));  // the pre-flight below passes later than the spare's check
  JobSpec spec = command_spec(3);
  spec.replace_stragglers = true;
  const Job job = c.submit(spec);
  ASSERT_EQ(pass_health_tasks(c, answered), 3) << "the first attempt's pre-flight";
  RunningJob r{job, c.stored_attempts(job.id).back().id, {}};
  r.nodes = c.nodes_of(r.attempt);
  ASSERT_EQ(r.nodes.size(), 3u);
  std::string spare;
  for (int i = 1; i <= 4; ++i) {
    if (std::count(r.nodes.begin(), r.nodes.end(), "n" + std::to_string(i)) == 0) spare = "n" + std::to_string(i);
  }
  for (const auto& node : r.nodes) c.started(node, r.attempt);
  const std::string slow = r.nodes.at(2);
  // Work that outranks the job waits meanwhile: it may not take the spare, only a node no spare.
  JobSpec urgent = command_spec(1);
  urgent.priority = 9999;
  urgent.wait_for_capacity = true;
  const Job waiting = c.submit(urgent);
  ASSERT_TRUE(c.stored_attempts(waiting.id).empty()) << "new work took the spare";
  report_windows(c, r, slow, 3);
  ASSERT_EQ(c.jobs.active_job(job.id)->stopping_to, StopIntent::requeue);

  for (const auto& node : r.nodes) {
    // The last exit ends the attempt; its commit is pending when the tick chooses spares.
    c.jobs.agent_message(node, c.agents.at(node).get(), AttemptExitedMsg{r.attempt, std::nullopt, SIGTERM, "killed by the daemon", 30, ""});
  }
  c.jobs.tick();
  c.settle();

  const auto attempts = c.stored_attempts(job.id);
  ASSERT_EQ(attempts.size(), 2u) << "the job did not resume: " << c.stored_job(job.id).value_or(Job{}).reason;
  EXPECT_THAT(attempts.back().nodes, ::testing::UnorderedElementsAre(r.nodes[0], r.nodes[1], spare));
  EXPECT_EQ(pass_health_tasks(c, answered), 1) << "only the straggler's own check: the resume needs no pre-flight";
  EXPECT_TRUE(c.stored_attempts(waiting.id).empty()) << "the outranking job took the spare the resume needed";
}

TEST(Stragglers, RanksAtOnePaceAndReportsWithoutWorkAreNeverNamed) {
  Cluster c;
  connect_nodes(c, 2);
  const RunningJob r = start_job(c, command_spec(2));
  report_windows(c, r, "none", 10);
  // Reports with neither device time nor a progress time teach the rule nothing.
  for (int step = 0; step < 100; step += 10) {
    c.heartbeat(r.nodes[0], {AttemptReport{r.attempt, r.job.id, step, std::nullopt, "forward"}});
  }
  EXPECT_TRUE(c.events_of_kind("job.straggler").empty());
  EXPECT_EQ(c.jobs.node(r.nodes[0])->node.state, NodeState::healthy);
}

}  // namespace
}  // namespace trainyard::daemon::testing
