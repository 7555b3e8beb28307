#include "daemon/recently_ended.h"

namespace trainyard::daemon {

void RecentlyEnded::remember(const Job& job) {
  if (capacity_ == 0) return;
  if (auto it = jobs_.find(job.id); it != jobs_.end()) {
    it->second = job;
    return;
  }
  if (jobs_.size() >= capacity_) {
    jobs_.erase(order_.front());
    order_.pop_front();
  }
  jobs_.emplace(job.id, job);
  order_.push_back(job.id);
}

const Job* RecentlyEnded::find(JobId id) const {
  const auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

}  // namespace trainyard::daemon
