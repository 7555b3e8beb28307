#include "daemon/job_graph.h"

#include <gtest/gtest.h>

#include <map>

namespace trainyard::daemon {
namespace {

// The graph with an active view the test controls.
class JobGraphTest : public ::testing::Test {
 protected:
  std::map<JobId, JobState> active;
  JobGraph graph{[this](JobId id) -> std::optional<JobState> {
    const auto it = active.find(id);
    return it == active.end() ? std::nullopt : std::optional(it->second);
  }};

  static JobSpec depending_on(JobId job, DependencyCondition condition = DependencyCondition::afterok) {
    JobSpec spec;
    spec.depends_on.push_back(Dependency{job, condition});
    return spec;
  }
  // Array `first` of `spec` (e.g. "0,2,5") as stored: its first task carries the spec.
  static Job task_of(JobId first, const std::string& spec, int index, JobState state) {
    Job job;
    job.id = first;
    job.state = state;
    job.spec.array = spec;
    job.array_task = ArrayTask{first, index, 3, std::nullopt};
    return job;
  }
  static std::vector<JobState> states(const std::vector<scheduler::UpstreamJob>& jobs) {
    std::vector<JobState> out;
    for (const auto& j : jobs) out.push_back(j.state);
    return out;
  }
};

TEST_F(JobGraphTest, ADependencyOnAJobCoversThatJobInItsActiveOrFinalState) {
  active[4] = JobState::running;
  EXPECT_TRUE(graph.check_dependencies(depending_on(4)));
  auto upstream = graph.upstream_of(Dependency{4, DependencyCondition::afterok}, Job{});
  ASSERT_EQ(upstream.size(), 1u);
  EXPECT_EQ(upstream[0].ref, "4");
  EXPECT_EQ(upstream[0].state, JobState::running);

  active.erase(4);
  graph.ended(4, JobState::failed);
  EXPECT_EQ(states(graph.upstream_of(Dependency{4, DependencyCondition::afterok}, Job{})),
            std::vector<JobState>{JobState::failed});
}

TEST_F(JobGraphTest, AnUnknownJobIsRefusedNamingTheDependencyAndAskedForFromTheStore) {
  const JobSpec spec = depending_on(9);
  EXPECT_EQ(graph.unknown_dependencies(spec), std::vector<JobId>{9});
  const Result<void> checked = graph.check_dependencies(spec);
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().field, "depends_on[0].job") << checked.error().message;

  Job stored;
  stored.id = 9;
  stored.state = JobState::succeeded;
  graph.learn(stored);
  EXPECT_TRUE(graph.unknown_dependencies(spec).empty());
  EXPECT_TRUE(graph.check_dependencies(spec));
}

TEST_F(JobGraphTest, AHiddenJobIsRefusedExactlyAsAMissingOne) {
  active[4] = JobState::running;
  graph.add_array(5, {0, 1});
  active[5] = JobState::pending;
  active[6] = JobState::pending;
  JobSpec spec = depending_on(4);
  spec.depends_on.push_back(Dependency{5, DependencyCondition::aftercorr});  // not an array itself: refused if seen
  const Result<void> missing = graph.check_dependencies(depending_on(9));
  ASSERT_FALSE(missing);
  const Result<void> hidden = graph.check_dependencies(depending_on(4), {4});
  ASSERT_FALSE(hidden);
  EXPECT_EQ(hidden.error().field, missing.error().field);
  EXPECT_EQ(hidden.error().message, "job 4 does not exist");
  const Result<void> hidden_array = graph.check_dependencies(spec, {5});
  ASSERT_FALSE(hidden_array);
  EXPECT_EQ(hidden_array.error().field, "depends_on[1].job") << "not its condition, which would say it is an array";
  EXPECT_TRUE(graph.check_dependencies(depending_on(4), {5}));
}

TEST_F(JobGraphTest, AnArrayIsKnownOnlyOnceEveryTasksStateIs) {
  graph.add_array(10, {0, 2, 5});  // tasks 10, 11, 12
  active[10] = JobState::pending;
  active[12] = JobState::pending;
  EXPECT_EQ(graph.unknown_dependencies(depending_on(10)), std::vector<JobId>{10}) << "task 11's state is unknown";
  graph.ended(11, JobState::succeeded);
  EXPECT_TRUE(graph.unknown_dependencies(depending_on(10)).empty());

  const auto upstream = graph.upstream_of(Dependency{10, DependencyCondition::afterany}, Job{});
  ASSERT_EQ(upstream.size(), 3u);
  EXPECT_EQ(upstream[1].ref, "10_2");
  EXPECT_EQ(states(upstream), (std::vector<JobState>{JobState::pending, JobState::succeeded, JobState::pending}));
}

TEST_F(JobGraphTest, AftercorrPairsTasksOfTheSameIndexAndNeedsTwoArrays) {
  graph.learn(task_of(20, "0,2,5", 0, JobState::running));  // tasks 20, 21, 22 with indices 0, 2, 5
  active[20] = active[21] = active[22] = JobState::running;
  Job mine;
  mine.array_task = ArrayTask{30, 5, 2, std::nullopt};
  const auto upstream = graph.upstream_of(Dependency{20, DependencyCondition::aftercorr}, mine);
  ASSERT_EQ(upstream.size(), 1u);
  EXPECT_EQ(upstream[0].id, 22);
  EXPECT_EQ(upstream[0].ref, "20_5");
  mine.array_task->index = 3;
  EXPECT_TRUE(graph.upstream_of(Dependency{20, DependencyCondition::aftercorr}, mine).empty())
      << "an index the other array lacks waits for nothing";

  JobSpec not_an_array = depending_on(20, DependencyCondition::aftercorr);
  const Result<void> refused = graph.check_dependencies(not_an_array);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().field, "depends_on[0].condition") << refused.error().message;
  not_an_array.array = "0-1";
  EXPECT_TRUE(graph.check_dependencies(not_an_array));
}

TEST_F(JobGraphTest, AJobThatEndsReleasesExactlyTheJobsWaitingForIt) {
  graph.wait(7, {1, 2});
  graph.wait(8, {1});
  graph.wait(8, {1});  // asked again on a later pass: still one entry
  EXPECT_EQ(graph.ended(1, JobState::succeeded), (std::vector<JobId>{7, 8}));
  EXPECT_TRUE(graph.ended(1, JobState::succeeded).empty()) << "released once";
  EXPECT_EQ(graph.ended(2, JobState::failed), std::vector<JobId>{7});
  EXPECT_TRUE(graph.ended(3, JobState::cancelled).empty());
}

TEST_F(JobGraphTest, AJobTheGraphCannotPlaceIsTakenAsStillRunning) {
  const auto upstream = graph.upstream_of(Dependency{42, DependencyCondition::afterok}, Job{});
  ASSERT_EQ(upstream.size(), 1u);
  EXPECT_EQ(upstream[0].state, JobState::running) << "its dependent waits rather than starting early";
}

}  // namespace
}  // namespace trainyard::daemon
