#pragma once
// How the API finds a job a caller may see and shows it: the stored or live record, masked for
// viewers who do not own it, with what only the running daemon knows (why it waits, its place in
// the queue, its storage). Shared by the handlers of jobs, their control, the queue and health checks.
#include <functional>
#include <map>
#include <string>

#include "daemon/base/auth.h"
#include "proto/job.h"
#include "proto/json_reader.h"

namespace trainyard::daemon {

struct ApiCall;
class JobManager;
class StoreWorker;

class JobViews {
 public:
  JobViews(JobManager& jobs, StoreWorker& store) : jobs_(jobs), store_(store) {}

  // Loads a job (active view first, else the store), checks the caller may see it, then continues;
  // another user's job answers as a missing one does.
  void with_job(ApiCall call, JobId id, std::function<void(ApiCall, Job)> then) const;
  // The job the path's {id} names: "12", or task 3 of array 12 as "12_3".
  void with_job(ApiCall call, std::function<void(ApiCall, Job)> then) const;

  // A job as `viewer` may read it: the values of secret-looking environment variables are masked
  // for everyone but the job's owner (README "Secrets in a job's environment").
  Json job_json(const Job& job, const Principal& viewer) const;
  // What the API adds to a job's record: why a pending job waits and its place in the queue.
  Json live_fields(const Job& job) const;
  Json storage_json(const Job& job) const;  // checkpoint and log bytes, quota (storage_usage.h)
  // A job array as one row of the job list: its first task's fields, the array's id, its tasks by state.
  Json array_row(const Job& task, const std::map<std::string, int>& counts, const Principal& viewer) const;

 private:
  JobManager& jobs_;
  StoreWorker& store_;
};

}  // namespace trainyard::daemon
