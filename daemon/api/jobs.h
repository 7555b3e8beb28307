#pragma once
// /v1/jobs: submit, list, read and cancel jobs, and read what they left behind (attempts,
// provenance, logs, checkpoints, metrics).
#include <cstddef>
#include <string>
#include <unordered_set>

#include "proto/job.h"
#include "proto/json_reader.h"
#include "proto/time.h"

namespace trainyard::daemon {

struct ApiCall;
class Auditor;
class FileWorker;
class JobManager;
class JobViews;
class StoreWorker;
struct JobPage;

class JobsApi {
 public:
  struct Limits {
    std::size_t max_pending_per_user;  // 0: no cap
    int max_user_priority;
  };
  JobsApi(JobManager& jobs, StoreWorker& store, FileWorker& files, const JobViews& views, Auditor& audit,
          const TimeSource& clock, std::string checkpoint_root, Limits limits);

  void submit_job(ApiCall call);
  void list_jobs(ApiCall call);
  void get_job(ApiCall call);
  void cancel_job(ApiCall call);
  void job_attempts(ApiCall call);
  void attempt_provenance(ApiCall call);
  void job_logs(ApiCall call);
  void job_checkpoints(ApiCall call);
  void job_metrics(ApiCall call);

 private:
  // submit_job's second half, once dependencies (and whose they are) are known.
  void accept_job(ApiCall call, JobSpec spec, const std::unordered_set<JobId>& hidden_dependencies);
  void cancel_array(ApiCall call, const Job& root);  // every task of the array still active
  // GET /v1/jobs' body for a page: live jobs and running attempts as in memory.
  Json job_list_body(const ApiCall& call, JobPage page, bool fold_arrays) const;

  JobManager& jobs_;
  StoreWorker& store_;
  FileWorker& files_;
  const JobViews& views_;
  Auditor& audit_;
  const TimeSource& clock_;
  std::string checkpoint_root_;
  Limits limits_;
};

}  // namespace trainyard::daemon
