// Health checks interfered with at the data plane (docs/DESIGN.md "Health checks"): a collective run
// that failed in transport while a node's data-plane port refused connections judges no node; it
// is run again, and a pre-flight that cannot judge its nodes fails the attempt without blaming them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "healthcheck/health_json.h"
#include "tests/unit/daemon/accelerator_reports.h"
#include "tests/unit/daemon/job_manager_helpers.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

JobManagerConfig preflighting_config() {
  JobManagerConfig config = test_config();
  config.preflight_checks = true;
  return config;
}

// What a rank whose ring never formed reports while a job floods its node's data-plane port.
Json flooded_rank(int rank, int world) {
  healthcheck::RankCollectiveResult result;
  result.rank = rank;
  result.world_size = world;
  result.error = "all_gather: rank " + std::to_string((rank + 1) % world) + " did not answer within 10000 ms";
  result.refused_connections = 280;
  return healthcheck::to_json(result);
}

// Answers every collective task not answered yet with `answer(rank, world)`; how many it answered.
int answer_collective_tasks(Cluster& c, std::map<std::string, std::size_t>& answered,
                            const std::function<Json(int, int)>& answer) {
  int count = 0;
  for (const auto& [name, agent] : c.agents) {
    const auto tasks = agent->all<HealthCheckMsg>();
    for (std::size_t i = answered[name]; i < tasks.size(); ++i, ++count) {
      EXPECT_EQ(tasks[i].suite, HealthSuite::collective);
      c.send(name,
             HealthResultMsg{tasks[i].task_id, answer(tasks[i].rank, static_cast<int>(tasks[i].peers.size())), ""});
    }
    answered[name] = tasks.size();
  }
  return count;
}

std::set<std::int64_t> sessions_sent(Cluster& c) {
  std::set<std::int64_t> sessions;
  for (const auto& [name, agent] : c.agents) {
    for (const HealthCheckMsg& task : agent->all<HealthCheckMsg>()) sessions.insert(task.session);
  }
  return sessions;
}

TEST(HealthInterference, AnInterferedPreflightRunsAgainOnAFreshSessionAndLaunchesWhenThatPasses) {
  Cluster c(preflighting_config());
  connect_nodes(c, 2);
  const Job job = c.submit(command_spec(2));
  std::map<std::string, std::size_t> answered;
  ASSERT_EQ(answer_collective_tasks(c, answered, flooded_rank), 2);
  EXPECT_EQ(state_of(c, "n1"), NodeState::healthy);
  EXPECT_EQ(state_of(c, "n2"), NodeState::healthy);
  EXPECT_EQ(sessions_sent(c).size(), 2u) << "the run again has its own session (and secret)";
  ASSERT_EQ(answer_collective_tasks(c, answered, passing_collective), 2) << "the set is run again";
  const AttemptId attempt = c.stored_attempts(job.id).back().id;
  EXPECT_EQ(c.nodes_of(attempt).size(), 2u) << "launched once a run nobody interfered with passed";
  EXPECT_EQ(state_of(c, "n1"), NodeState::healthy);
  EXPECT_EQ(state_of(c, "n2"), NodeState::healthy);
}

TEST(HealthInterference, APreflightInterferedWithEveryTimeFailsTheAttemptWithoutBlamingANode) {
  Cluster c(preflighting_config());
  connect_nodes(c, 2);
  const Job job = c.submit(command_spec(2));
  std::map<std::string, std::size_t> answered;
  for (int run = 0; run < 3; ++run) ASSERT_EQ(answer_collective_tasks(c, answered, flooded_rank), 2) << "run " << run;
  EXPECT_EQ(answer_collective_tasks(c, answered, flooded_rank), 0) << "three runs, then the check gives up";
  EXPECT_EQ(state_of(c, "n1"), NodeState::healthy) << "a flood at the port says nothing about the node";
  EXPECT_EQ(state_of(c, "n2"), NodeState::healthy);
  EXPECT_EQ(c.jobs.node("n1")->node.last_check_verdict, "NOT_TESTED");
  const Attempt first = c.stored_attempts(job.id).front();
  EXPECT_EQ(first.state, AttemptState::failed) << "an attempt whose pre-flight judged nobody did not succeed";
  EXPECT_EQ(first.failure_class, "health_failed");
  EXPECT_THAT(first.reason, HasSubstr("refused 280 data-plane connections"));
  EXPECT_TRUE(c.stored_job(job.id)->excluded_nodes.empty()) << "no node is excluded for interference";
}

}  // namespace
}  // namespace trainyard::daemon::testing
