#include "daemon/telemetry/goodput_window.h"

#include <algorithm>
#include <vector>

#include "proto/time.h"

namespace trainyard::daemon {

Json goodput_job_row(const Job& job, const Goodput& g) {
  Json row = to_json(g);
  row["job_id"] = job.id;
  row["name"] = job.spec.name;
  row["state"] = to_string(job.state);
  return row;
}

WindowedGoodput::WindowedGoodput(TimePoint from, TimePoint to, std::optional<std::string> only_user,
                                 std::size_t job_rows, int page_rows)
    : from_(from), to_(to), only_user_(std::move(only_user)), job_rows_(job_rows), page_rows_(std::max(page_rows, 1)) {}

bool WindowedGoodput::read_page(store::Store& store) {
  std::vector<Attempt> page = store.attempts_running_since(from_, before_job_, page_rows_);
  const bool full = page.size() == static_cast<std::size_t>(page_rows_);
  std::vector<std::vector<Attempt>> by_job;  // newest job first, as read
  for (Attempt& a : page) {
    if (by_job.empty() || by_job.back().front().job_id != a.job_id) by_job.emplace_back();
    by_job.back().push_back(std::move(a));
  }
  if (by_job.empty()) return false;
  if (full && by_job.size() > 1) {
    // The last job's older attempts may be on the next page: it is read whole there.
    before_job_ = by_job.back().front().job_id + 1;
    by_job.pop_back();
  } else {
    before_job_ = by_job.back().front().job_id;
  }
  for (std::vector<Attempt>& attempts : by_job) {
    std::reverse(attempts.begin(), attempts.end());  // creation order
    const std::optional<Job> job = store.job(attempts.front().job_id);
    if (!job || (only_user_ && job->user != *only_user_)) continue;
    const Goodput g = job_goodput_in(attempts, from_, to_);
    cluster_ += g;
    if (jobs_.size() < job_rows_) jobs_.push_back(goodput_job_row(*job, g));
  }
  return full;
}

Json WindowedGoodput::body() const {
  return {{"window", {{"from", format_time(from_)}, {"to", format_time(to_)}}},
          {"cluster", to_json(cluster_)},
          {"jobs", jobs_}};
}

}  // namespace trainyard::daemon
