#pragma once
// GET /v1/jobs' reads, apart from HTTP: one page of jobs from the store with everything its rows
// need, and that page folded into rows. Pure functions over store::Store (the store thread calls
// read_job_page) and over values (job_list_rows), so they are tested on the in-memory store.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/job.h"
#include "store/store.h"

namespace trainyard::daemon {

struct JobPageQuery {
  store::JobQuery filter;      // states, share, user, submission times, before/after ids; not `limit`
  std::optional<JobId> array;  // only this array's tasks, each its own row
  int limit = 100;             // rows' jobs on the page
};

struct JobPage {
  std::vector<Job> jobs;                           // newest first, as stored; an array's tasks unfolded
  std::map<JobId, std::vector<Job>> array_tasks;   // by array: all its tasks, for each array the page folds
  std::map<JobId, std::vector<Attempt>> attempts;  // by job: each listed job's and each folded task's
  std::optional<JobId> next_before;                // where the next page starts; none on the last page
};

// One page. Without `array`, an array on the page is read whole (its row counts every task), and
// the next page starts below the array's first task, so an array never shows on two pages.
JobPage read_job_page(store::Store& store, const JobPageQuery& query);

// The page of the live jobs (pending, starting, running) that match the query, from the daemon's
// memory: what can be listed while the store cannot be read. Arrays are not folded (an array's
// ended tasks are not in memory) and no attempts are included.
JobPage live_job_page(const std::map<JobId, Job>& active, const JobPageQuery& query);

// All tasks of the array `task` belongs to, as stored.
std::vector<Job> array_tasks(store::Store& store, const ArrayTask& task);

struct JobListRow {
  Job job;                                      // the job; for an array, its newest task on the page
  std::optional<std::vector<Job>> array_tasks;  // set when the row stands for a whole array
};

// The page's rows, newest first: a job per row, or (when `fold_arrays`) one row per array where its
// first task on the page stands. `fresh` gives the view to show of a stored job (the live one when
// the daemon holds it).
std::vector<JobListRow> job_list_rows(const JobPage& page, bool fold_arrays,
                                      const std::function<Job(const Job&)>& fresh);

// An array's tasks counted by state.
std::map<std::string, int> task_states(const std::vector<Job>& tasks);
// One state for a folded array: RUNNING while any task runs or starts, PENDING while any waits,
// then SUCCEEDED only if every task did, FAILED if any did, else CANCELLED.
std::string array_state(const std::map<std::string, int>& counts);

}  // namespace trainyard::daemon
