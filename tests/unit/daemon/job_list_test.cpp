// The job list's reads over the in-memory store (daemon/api/job_list.h): pages, arrays folded into
// one row and read whole, and the attempts each row needs.
#include <gtest/gtest.h>

#include <span>

#include "daemon/api/job_list.h"
#include "tests/support/in_memory_store.h"
#include "tests/unit/store/records.h"

namespace trainyard::daemon {
namespace {

using store::minimal_attempt;
using store::minimal_job;

Job task_of(JobId array_job, int index, int count) {
  Job task = minimal_job(array_job + index, "alice");
  task.array_task = ArrayTask{array_job, index, count, std::nullopt};
  return task;
}

std::vector<JobId> ids(const std::vector<Job>& jobs) {
  std::vector<JobId> out;
  for (const Job& j : jobs) out.push_back(j.id);
  return out;
}

// Jobs 1, 2 and 6 are alice's, 3-5 her array of three (array job 3), 7 is bob's. Job 2, task 4 and
// job 6 ran an attempt each.
class JobListTest : public ::testing::Test {
 protected:
  JobListTest() {
    store::Change change;
    change.jobs = {minimal_job(1, "alice"), minimal_job(2, "alice"), task_of(3, 0, 3),     task_of(3, 1, 3),
                   task_of(3, 2, 3),        minimal_job(6, "alice"), minimal_job(7, "bob")};
    change.attempts = {minimal_attempt(10, 2), minimal_attempt(11, 4), minimal_attempt(12, 6)};
    store.commit(std::span<const store::Change>(&change, 1));
  }

  JobPage page(int limit, std::optional<JobId> before = std::nullopt, std::optional<JobId> array = std::nullopt) {
    JobPageQuery query;
    query.limit = limit;
    query.filter.before_id = before;
    query.array = array;
    return read_job_page(store, query);
  }

  InMemoryStore store;
};

Job as_stored(const Job& job) { return job; }

TEST_F(JobListTest, AnArrayIsReadWholeAndShowsOnOnePageOnly) {
  const JobPage first = page(2);
  EXPECT_EQ(ids(first.jobs), (std::vector<JobId>{7, 6}));
  ASSERT_EQ(first.next_before, 6);

  const JobPage second = page(2, first.next_before);
  EXPECT_EQ(ids(second.jobs), (std::vector<JobId>{5, 4}));
  EXPECT_EQ(second.next_before, 3) << "the next page starts below the array, which this page showed whole";
  ASSERT_TRUE(second.array_tasks.contains(3));
  EXPECT_EQ(ids(second.array_tasks.at(3)), (std::vector<JobId>{5, 4, 3})) << "task 3 is counted though not on the page";
  const std::vector<JobListRow> rows = job_list_rows(second, true, as_stored);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].job.id, 5);
  ASSERT_TRUE(rows[0].array_tasks);
  EXPECT_EQ(rows[0].array_tasks->size(), 3u);

  const JobPage third = page(2, second.next_before);
  EXPECT_EQ(ids(third.jobs), (std::vector<JobId>{2, 1}));
  EXPECT_FALSE(third.next_before) << "the last page";
}

TEST_F(JobListTest, EveryRowHasItsAttemptsAndAFoldedArrayItsTasksAttempts) {
  JobPageQuery query;
  query.filter.user = "alice";
  query.limit = 10;
  const JobPage page = read_job_page(store, query);
  EXPECT_FALSE(page.next_before);
  EXPECT_EQ(page.attempts.size(), 3u);
  EXPECT_EQ(page.attempts.at(2).at(0).id, 10);
  EXPECT_EQ(page.attempts.at(4).at(0).id, 11) << "a task's attempts count towards its array's row";
  EXPECT_EQ(page.attempts.at(6).at(0).id, 12);
  std::vector<JobId> row_ids;
  for (const JobListRow& row : job_list_rows(page, true, as_stored)) row_ids.push_back(row.job.id);
  EXPECT_EQ(row_ids, (std::vector<JobId>{6, 5, 2, 1}));
}

TEST_F(JobListTest, OneArraysTasksAreRowsOfTheirOwnAndPageByTask) {
  const JobPage first = page(2, std::nullopt, 3);
  EXPECT_EQ(ids(first.jobs), (std::vector<JobId>{5, 4}));
  EXPECT_EQ(first.next_before, 4);
  EXPECT_TRUE(first.array_tasks.empty());
  EXPECT_TRUE(first.attempts.contains(4));
  EXPECT_EQ(job_list_rows(first, false, as_stored).size(), 2u);

  const JobPage second = page(2, first.next_before, 3);
  EXPECT_EQ(ids(second.jobs), (std::vector<JobId>{3}));
  EXPECT_FALSE(second.next_before) << "no next page of jobs outside the array";
}

TEST_F(JobListTest, RowsShowTheFreshViewOfEachJobAndTask) {
  const JobPage all = page(10);
  const auto running = [](const Job& stored) {
    Job live = stored;
    if (stored.id == 6 || stored.id == 4) live.state = JobState::running;
    return live;
  };
  const std::vector<JobListRow> rows = job_list_rows(all, true, running);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[1].job.id, 6);
  EXPECT_EQ(rows[1].job.state, JobState::running);
  ASSERT_TRUE(rows[2].array_tasks);
  EXPECT_EQ(rows[2].array_tasks->at(1).state, JobState::running) << "task 4, the array's second newest";
}

TEST_F(JobListTest, AnArrayIsReadAsAllItsTasks) {
  EXPECT_EQ(ids(array_tasks(store, *task_of(3, 1, 3).array_task)), (std::vector<JobId>{5, 4, 3}));
}

TEST(LiveJobPage, ListsTheLiveJobsThatMatchNewestFirstAndPages) {
  std::map<JobId, Job> active;
  for (JobId id : {1, 2, 4, 6, 7}) active[id] = minimal_job(id, id == 7 ? "bob" : "alice");
  active[4].state = JobState::running;
  JobPageQuery query;
  query.filter.user = "alice";
  query.limit = 2;
  JobPage page = live_job_page(active, query);
  EXPECT_EQ(ids(page.jobs), (std::vector<JobId>{6, 4}));
  EXPECT_EQ(page.next_before, 4);
  query.filter.before_id = page.next_before;
  page = live_job_page(active, query);
  EXPECT_EQ(ids(page.jobs), (std::vector<JobId>{2, 1}));
  EXPECT_FALSE(page.next_before) << "the last page";
  query.filter.before_id.reset();
  query.filter.states = {JobState::running};
  EXPECT_EQ(ids(live_job_page(active, query).jobs), (std::vector<JobId>{4}));
  query.filter.states.clear();
  query.filter.user = "bob";
  EXPECT_EQ(ids(live_job_page(active, query).jobs), (std::vector<JobId>{7}));
}

}  // namespace
}  // namespace trainyard::daemon
