// The pending queue in the scheduler's order, paged by position (the dashboard's queue view): the
// job list pages newest first by id, which cannot show where a job stands among 10,000.
#include "daemon/api/queue.h"
#include "daemon/api/call.h"
#include "daemon/api/job_views.h"
#include "daemon/api/query.h"
#include "daemon/job_manager.h"

namespace trainyard::daemon {

void QueueApi::list_queue(ApiCall call) {
  const auto offset = static_cast<std::size_t>(query_int(call.request, "offset").value_or(0));
  const auto limit = static_cast<std::size_t>(query_int(call.request, "limit").value_or(100));
  const scheduler::Scheduler& scheduler = jobs_.scheduler();
  std::vector<JobId> page;
  std::size_t total = 0;
  if (call.who.may(Action::read_all_jobs)) {
    page = scheduler.queue_page(offset, limit);
    total = scheduler.queue_length();
  } else {
    // A user pages through their own jobs only, in the same order (positions stay the cluster's).
    for (const JobId id : scheduler.queue_page(0, scheduler.queue_length())) {
      const Job* job = jobs_.active_job(id);
      if (!job || job->user != call.who.user) continue;
      if (total++ >= offset && page.size() < limit) page.push_back(id);
    }
  }
  Json list = Json::array();
  for (const JobId id : page) {
    if (const Job* job = jobs_.active_job(id)) list.push_back(views_.job_json(*job, call.who));
  }
  const std::size_t end = offset + page.size();
  call.reply(200, {{"jobs", list}, {"total", total}, {"next", end < total ? Json(std::to_string(end)) : Json(nullptr)}});
}

}  // namespace trainyard::daemon
