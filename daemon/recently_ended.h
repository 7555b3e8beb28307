#pragma once
// The jobs that ended last, whole, kept in memory so that a job which just ended can still be read
// while the store cannot be (a database restart, a full disk): what a user checks first after a
// job's end is that job. Bounded: the oldest goes when a newer one ends.
#include <cstddef>
#include <deque>
#include <unordered_map>

#include "proto/job.h"

namespace trainyard::daemon {

class RecentlyEnded {
 public:
  explicit RecentlyEnded(std::size_t capacity) : capacity_(capacity) {}

  // `job` has ended; a job already kept is replaced by its newer record.
  void remember(const Job& job);
  const Job* find(JobId id) const;
  std::size_t size() const { return jobs_.size(); }

 private:
  std::size_t capacity_;
  std::unordered_map<JobId, Job> jobs_;
  std::deque<JobId> order_;  // oldest first; an id is in it once
};

}  // namespace trainyard::daemon
