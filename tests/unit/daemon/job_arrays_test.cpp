// Job arrays and dependencies in the job manager, over fake agents and time.
#include <gtest/gtest.h>

#include <algorithm>

#include "proto/errors.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

JobSpec one_core(std::optional<std::string> array = std::nullopt) {
  JobSpec spec = command_spec(1);
  spec.cores_per_node = 1;
  spec.array = std::move(array);
  return spec;
}

std::vector<LaunchMsg> launches_of(const Cluster& c) {
  std::vector<LaunchMsg> all;
  for (const auto& [node, list] : c.launches()) all.insert(all.end(), list.begin(), list.end());
  return all;
}

void run_to_exit(Cluster& c, const LaunchMsg& launch, int code) {
  c.started("n1", launch.attempt_id);
  c.exited("n1", launch.attempt_id, code);
}

std::string submit_refused_field(Cluster& c, JobSpec spec) {
  std::string field = "<unanswered>";
  c.jobs.submit(std::move(spec), "alice", [&](Result<JobManager::Submitted> accepted) {
    field = accepted ? "<accepted>" : accepted.error().field;
  });
  return field;
}

TEST(JobArrays, TasksGetConsecutiveIdsTheirEnvironmentAndRunAtMostKAtOnce) {
  Cluster c;
  c.connect("n1", 8);
  const Job first = c.submit(one_core("3-7%2"));
  ASSERT_TRUE(first.array_task);
  EXPECT_EQ(first.array_task->array_job, first.id);
  for (int i = 0; i < 5; ++i) {
    const Job* task = c.jobs.active_job(first.id + i);
    ASSERT_TRUE(task);
    EXPECT_EQ(task->array_task, (ArrayTask{first.id, 3 + i, 5, 2}));
  }
  std::vector<LaunchMsg> launched = launches_of(c);
  ASSERT_EQ(launched.size(), 2u);
  EXPECT_EQ(launched[0].command.env.at("TRAINYARD_ARRAY_JOB_ID"), std::to_string(first.id));
  EXPECT_EQ(launched[0].command.env.at("TRAINYARD_ARRAY_TASK_ID"), "3");
  EXPECT_EQ(launched[0].command.env.at("TRAINYARD_ARRAY_TASK_COUNT"), "5");
  const auto reason = c.jobs.scheduler().why_pending(first.id + 2);
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->code, scheduler::ReasonCode::array_limit);

  run_to_exit(c, launched[0], 0);
  launched = launches_of(c);
  ASSERT_EQ(launched.size(), 3u);
  EXPECT_EQ(launched[2].command.env.at("TRAINYARD_ARRAY_TASK_ID"), "5");
}

TEST(JobArrays, AnArrayOverTheLimitIsRefusedNamingTheField) {
  JobManagerConfig config = test_config();
  config.max_array_size = 4;
  Cluster c(config);
  c.connect("n1", 8);
  EXPECT_EQ(submit_refused_field(c, one_core("0-4")), "array");
  EXPECT_EQ(c.submit(one_core("0-3")).array_task->count, 4);
}

TEST(Dependencies, AnAfterokJobWaitsNamingTheJobThenRuns) {
  Cluster c;
  c.connect("n1", 8);
  const Job a = c.submit(one_core());
  JobSpec spec = one_core();
  spec.depends_on = {{a.id, DependencyCondition::afterok}};
  const Job b = c.submit(spec);
  ASSERT_EQ(launches_of(c).size(), 1u);
  const auto reason = c.jobs.scheduler().why_pending(b.id);
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->message, "waiting for job " + std::to_string(a.id) + " to succeed (afterok)");
  run_to_exit(c, launches_of(c)[0], 0);
  ASSERT_EQ(launches_of(c).size(), 2u);
  EXPECT_EQ(launches_of(c)[1].job_id, b.id);
}

TEST(Dependencies, OneThatCanNeverBeMetCancelsTheJobAndItsDependents) {
  Cluster c;
  c.connect("n1", 8);
  const Job a = c.submit(one_core());
  JobSpec after_a = one_core();
  after_a.depends_on = {{a.id, DependencyCondition::afterok}};
  const Job b = c.submit(after_a);
  JobSpec after_b = one_core();
  after_b.depends_on = {{b.id, DependencyCondition::afterany}};
  const Job d = c.submit(after_b);
  run_to_exit(c, launches_of(c)[0], 1);
  const auto cancelled = c.stored_job(b.id);
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->state, JobState::cancelled);
  EXPECT_EQ(cancelled->reason, "dependency afterok:" + std::to_string(a.id) + " can never be met: job " +
                                   std::to_string(a.id) + " ended FAILED");
  // afterany is met by a cancelled job: it runs.
  ASSERT_EQ(launches_of(c).size(), 2u);
  EXPECT_EQ(launches_of(c)[1].job_id, d.id);
}

// aftercorr pairs tasks by index: task N of B starts once task N of A succeeded, not after all of A.
TEST(Dependencies, AftercorrStartsTaskNAfterTaskNOfTheOtherArray) {
  Cluster c;
  c.connect("n1", 8);
  const Job a = c.submit(one_core("0-2"));
  JobSpec corr = one_core("0-2");
  corr.depends_on = {{a.id, DependencyCondition::aftercorr}};
  const Job b = c.submit(corr);
  const std::vector<LaunchMsg> of_a = launches_of(c);
  ASSERT_EQ(of_a.size(), 3u) << "only A's tasks run";
  const auto launch_of = [&](JobId job) {
    return *std::find_if(of_a.begin(), of_a.end(), [&](const LaunchMsg& l) { return l.job_id == job; });
  };
  const auto reason = c.jobs.scheduler().why_pending(b.id + 1);
  ASSERT_TRUE(reason);
  EXPECT_EQ(reason->message, "waiting for job " + std::to_string(a.id) + "_1 to succeed (aftercorr)");

  run_to_exit(c, launch_of(a.id + 1), 0);
  ASSERT_EQ(launches_of(c).size(), 4u);
  EXPECT_EQ(launches_of(c)[3].job_id, b.id + 1) << "B_1 starts after A_1, while A_0 and A_2 still run";
  EXPECT_EQ(c.jobs.active_job(b.id)->state, JobState::pending);
  EXPECT_EQ(c.jobs.active_job(b.id + 2)->state, JobState::pending);

  run_to_exit(c, launch_of(a.id + 2), 0);
  ASSERT_EQ(launches_of(c).size(), 5u);
  EXPECT_EQ(launches_of(c)[4].job_id, b.id + 2);

  // A_0 failing can never let B_0 run; B's other tasks are not touched by it.
  run_to_exit(c, launch_of(a.id), 1);
  EXPECT_EQ(c.stored_job(b.id)->state, JobState::cancelled);
  EXPECT_EQ(launches_of(c).size(), 5u);
  EXPECT_TRUE(c.jobs.active_job(b.id + 1)) << "B_1 still runs";
}

TEST(Dependencies, UnknownIdsAndAftercorrWithoutArraysAreRefused) {
  Cluster c;
  c.connect("n1", 8);
  const Job a = c.submit(one_core());
  JobSpec unknown = one_core();
  unknown.depends_on = {{a.id, DependencyCondition::afterok}, {a.id + 1, DependencyCondition::afterok}};
  EXPECT_EQ(submit_refused_field(c, unknown), "depends_on[1].job");
  JobSpec corr = one_core("0-3");
  corr.depends_on = {{a.id, DependencyCondition::aftercorr}};
  EXPECT_EQ(submit_refused_field(c, corr), "depends_on[0].condition");
}

TEST(Dependencies, AnArrayWhoseOtherTasksEndedBeforeARestartIsReadBackBeforeAJobWaitsOnIt) {
  // The store as a restarted daemon finds it: array 5 (tasks 5 and 6), task 5 still pending, task 6
  // ended before the restart and so is in no list the job manager restores.
  store::LoadedState state;
  Job pending;
  pending.id = 5;
  pending.spec = one_core("0-1");
  pending.user = "alice";
  pending.array_task = ArrayTask{5, 0, 2, std::nullopt};
  state.active_jobs.push_back(pending);
  state.max_job_id = 6;
  Cluster c;
  c.jobs.restore(state);
  JobSpec waits = one_core();
  waits.depends_on = {{5, DependencyCondition::afterany}};
  EXPECT_EQ(c.jobs.unknown_dependencies(waits), std::vector<JobId>{5})
      << "task 6's end must be read from the store, or the dependency would wait for it forever";
  c.jobs.remember_jobs({[] {
    Job ended;
    ended.id = 6;
    ended.state = JobState::succeeded;
    ended.array_task = ArrayTask{5, 1, 2, std::nullopt};
    return ended;
  }()});
  EXPECT_TRUE(c.jobs.unknown_dependencies(waits).empty());
}

}  // namespace
}  // namespace trainyard::daemon::testing
