#include "tests/support/failing_store.h"

#include <utility>

namespace trainyard {

void FailingStore::fail_commits(bool fail) {
  std::lock_guard lock(mutex_);
  failing_all_ = fail;
  chosen_ = 0;
}

void FailingStore::fail_next_commits(std::uint64_t which) {
  std::lock_guard lock(mutex_);
  failing_all_ = false;
  chosen_ = which;
  chosen_from_ = tried_;
}

std::int64_t FailingStore::commits_tried() const {
  std::lock_guard lock(mutex_);
  return tried_;
}

std::int64_t FailingStore::commits_failed() const {
  std::lock_guard lock(mutex_);
  return failed_;
}

bool FailingStore::committed_job(JobId id) const {
  std::lock_guard lock(mutex_);
  return committed_jobs_.contains(id);
}

std::vector<store::Event> FailingStore::take_failed_events() {
  std::lock_guard lock(mutex_);
  return std::exchange(failed_events_, {});
}

bool FailingStore::fails_now(std::span<const store::Change> batch) {
  const std::int64_t k = tried_++ - chosen_from_;
  const bool chosen = k >= 0 && k < 64 && (chosen_ >> k & 1U) != 0;
  if (!failing_all_ && !chosen) return false;
  ++failed_;
  for (const auto& change : batch) failed_events_.insert(failed_events_.end(), change.events.begin(), change.events.end());
  return true;
}

void FailingStore::commit(std::span<const store::Change> batch) {
  {
    std::lock_guard lock(mutex_);
    if (fails_now(batch)) throw store::StoreError("disk on fire (injected)");
  }
  ForwardingStore::commit(batch);
  std::lock_guard lock(mutex_);
  for (const auto& change : batch) {
    for (const auto& job : change.jobs) committed_jobs_.insert(job.id);
  }
}

}  // namespace trainyard
