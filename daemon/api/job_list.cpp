#include "daemon/api/job_list.h"

#include <algorithm>
#include <climits>
#include <set>

namespace trainyard::daemon {
namespace {

// One past the last task id of array `array`.
JobId tasks_end(store::Store& store, JobId array) {
  const std::optional<Job> root = store.job(array);
  if (!root || !root->array_task || root->array_task->array_job != array) return array + 1;
  return array + root->array_task->count;
}

bool in_array(const Job& job, JobId array) { return job.array_task && job.array_task->array_job == array; }

bool matches(const store::JobQuery& filter, const Job& job) {
  if (!filter.states.empty() && std::find(filter.states.begin(), filter.states.end(), job.state) == filter.states.end()) {
    return false;
  }
  if (filter.share && job.spec.share != *filter.share) return false;
  if (filter.user && job.user != *filter.user) return false;
  if (filter.before_id && job.id >= *filter.before_id) return false;
  if (filter.after_id && job.id <= *filter.after_id) return false;
  if (filter.submitted_since && job.submitted_at < *filter.submitted_since) return false;
  if (filter.submitted_until && job.submitted_at >= *filter.submitted_until) return false;
  return true;
}

}  // namespace

JobPage live_job_page(const std::map<JobId, Job>& active, const JobPageQuery& query) {
  JobPage page;
  for (auto it = active.rbegin(); it != active.rend(); ++it) {
    const Job& job = it->second;
    if (!matches(query.filter, job) || (query.array && !in_array(job, *query.array))) continue;
    if (static_cast<int>(page.jobs.size()) == query.limit) {
      page.next_before = page.jobs.back().id;
      break;
    }
    page.jobs.push_back(job);
  }
  return page;
}

std::vector<Job> array_tasks(store::Store& store, const ArrayTask& task) {
  store::JobQuery query;
  query.before_id = task.array_job + task.count;
  query.limit = task.count;
  std::vector<Job> tasks = store.jobs(query);
  std::erase_if(tasks, [&](const Job& j) { return !in_array(j, task.array_job); });
  return tasks;
}

JobPage read_job_page(store::Store& store, const JobPageQuery& query) {
  store::JobQuery filter = query.filter;
  filter.limit = query.limit + 1;  // one more tells whether a next page exists
  if (query.array) {               // the array's tasks are the ids from its own to one below tasks_end
    filter.before_id = std::min(filter.before_id.value_or(INT64_MAX), tasks_end(store, *query.array));
    filter.after_id = std::max(filter.after_id.value_or(0), *query.array - 1);
  }
  JobPage page;
  page.jobs = store.jobs(filter);
  if (static_cast<int>(page.jobs.size()) > query.limit) {
    page.jobs.pop_back();
    const Job& last = page.jobs.back();
    page.next_before = query.array || !last.array_task ? last.id : std::min(last.id, last.array_task->array_job);
  }
  if (query.array) std::erase_if(page.jobs, [&](const Job& j) { return !in_array(j, *query.array); });
  if (!query.array) {
    for (const Job& j : page.jobs) {
      if (j.array_task && !page.array_tasks.contains(j.array_task->array_job)) {
        page.array_tasks[j.array_task->array_job] = array_tasks(store, *j.array_task);
      }
    }
  }
  // Every row's attempts, and every task's of a folded array, in one query.
  std::vector<JobId> with_attempts;
  for (const Job& job : page.jobs) {
    if (query.array || !job.array_task) with_attempts.push_back(job.id);
  }
  for (const auto& [array_job, tasks] : page.array_tasks) {
    for (const Job& task : tasks) with_attempts.push_back(task.id);
  }
  for (Attempt& a : store.attempts_of_jobs(with_attempts)) page.attempts[a.job_id].push_back(std::move(a));
  return page;
}

std::vector<JobListRow> job_list_rows(const JobPage& page, bool fold_arrays,
                                      const std::function<Job(const Job&)>& fresh) {
  std::vector<JobListRow> rows;
  std::set<JobId> folded;
  for (const Job& stored : page.jobs) {
    if (!fold_arrays || !stored.array_task) {
      rows.push_back({fresh(stored), std::nullopt});
      continue;
    }
    const JobId array_job = stored.array_task->array_job;
    if (!folded.insert(array_job).second) continue;
    std::vector<Job> tasks;
    for (const Job& task : page.array_tasks.at(array_job)) tasks.push_back(fresh(task));
    rows.push_back({fresh(stored), std::move(tasks)});
  }
  return rows;
}

std::map<std::string, int> task_states(const std::vector<Job>& tasks) {
  std::map<std::string, int> counts;
  for (const Job& j : tasks) ++counts[to_string(j.state)];
  return counts;
}

std::string array_state(const std::map<std::string, int>& counts) {
  for (JobState s : {JobState::running, JobState::starting, JobState::pending, JobState::failed, JobState::cancelled}) {
    if (counts.contains(to_string(s))) return to_string(s == JobState::starting ? JobState::running : s);
  }
  return to_string(JobState::succeeded);
}

}  // namespace trainyard::daemon
