// Finding a job a caller may see, and showing it as they may read it.
#include <algorithm>
#include <climits>

#include "daemon/api/call.h"
#include "daemon/api/job_access.h"
#include "daemon/api/job_list.h"
#include "daemon/api/job_views.h"
#include "daemon/base/store_worker.h"
#include "daemon/job_manager.h"
#include "proto/provenance.h"
#include "scheduler/types.h"

namespace trainyard::daemon {
namespace {

// A job's record as `viewer` may read it: secret-looking environment values masked unless the
// viewer owns the job (the owner wrote them and resubmits from them).
Json record_for(const Job& job, const Principal& viewer) {
  Json j = to_json(job);
  if (viewer.user != job.user && !job.spec.command.env.empty()) {
    j["spec"]["command"]["env"] = mask_secrets(job.spec.command.env);
  }
  return j;
}

}  // namespace

Json JobViews::array_row(const Job& task, const std::map<std::string, int>& counts, const Principal& viewer) const {
  const ArrayTask& array = *task.array_task;
  Json row = record_for(task, viewer);
  row["id"] = array.array_job;
  row["state"] = array_state(counts);
  row["reason"] = "";
  row["array"].erase("task_id");
  row["array"]["counts"] = counts;
  return row;
}

Json JobViews::live_fields(const Job& job) const {
  Json j = Json::object();
  if (job.state == JobState::pending && job.held != Hold::none) {
    j["pending_reason"] = {{"code", "held"}, {"message", hold_reason(job.held)}};
  } else if (job.state == JobState::pending) {
    if (auto reason = jobs_.scheduler().why_pending(job.id)) {
      j["pending_reason"] = {{"code", scheduler::to_string(reason->code)}, {"message", reason->message}};
    }
    if (auto pos = jobs_.scheduler().queue_position(job.id)) j["queue_position"] = *pos;
  }
  return j;
}

Json JobViews::storage_json(const Job& job) const {
  const StorageBytes bytes = jobs_.storage().of_job(job.id);
  Json j = {{"checkpoint_bytes", bytes.checkpoint_bytes},
            {"log_bytes", bytes.log_bytes},
            {"work_bytes", bytes.work_bytes},
            {"over_quota", jobs_.storage().over_quota(job.id)}};
  if (job.spec.storage_limit_mb) j["limit_mb"] = *job.spec.storage_limit_mb;
  return j;
}

Json JobViews::job_json(const Job& job, const Principal& viewer) const {
  Json j = record_for(job, viewer);
  j.update(live_fields(job));
  return j;
}

void JobViews::with_job(ApiCall call, JobId id, std::function<void(ApiCall, Job)> then) const {
  auto check = [call, id, then](const std::optional<Job>& job) {
    // Another user's job answers as a missing one does: a 403 would tell which ids exist.
    if (!job || !can_see(call.who, *job)) {
      return call.fail(Error::not_found("job " + std::to_string(id) + " does not exist"));
    }
    then(call, *job);
  };
  if (const Job* active = jobs_.active_job(id)) return check(*active);
  store_.read(
      [id, check](store::Store& store) { return std::function<void()>([job = store.job(id), check] { check(job); }); },
      [this, call, id, check](const Error& error) {
        // A job that just ended is still known while the store cannot be read (a database restart).
        if (const Job* ended = jobs_.recently_ended(id)) return check(*ended);
        call.fail(error.during("could not read the job"));
      });
}

void JobViews::with_job(ApiCall call, std::function<void(ApiCall, Job)> then) const {
  const JobRef ref = parse_job_ref(call.param("id"));
  if (!ref.task) return with_job(call, ref.job, std::move(then));
  // Task N of array A has the id A + N's position among the array's indices.
  with_job(call, ref.job, [this, ref, then](ApiCall c, Job root) {
    const auto missing = [&] {
      c.fail(404, "not_found", "job " + std::to_string(ref.job) + " has no array task " + std::to_string(*ref.task));
    };
    if (!root.array_task || root.array_task->array_job != root.id || !root.spec.array) return missing();
    const std::vector<int> indices = parse_array_spec(*root.spec.array, INT_MAX).indices;
    const auto at = std::lower_bound(indices.begin(), indices.end(), *ref.task);
    if (at == indices.end() || *at != *ref.task) return missing();
    with_job(c, root.id + (at - indices.begin()), then);
  });
}

}  // namespace trainyard::daemon
