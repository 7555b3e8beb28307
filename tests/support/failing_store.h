#pragma once
// A Store decorator whose commits fail when a test says so: every one until told otherwise, or a
// chosen few of the next ones (the unit tests' "the next commit fails", the API fuzzer's subset).
// It counts the commits tried and failed, so a test can tell whether a request wrote at all, keeps
// the events of those that failed, so a test can tell whose change was refused (an API change
// carries its audit record), and records the jobs it committed, so a completion can check its
// change is already durable.
//
// Threading contract: commit() runs on the store worker's thread; everything else from any thread.
#include <cstdint>
#include <mutex>
#include <set>
#include <vector>

#include "tests/support/forwarding_store.h"

namespace trainyard {

class FailingStore final : public ForwardingStore {
 public:
  explicit FailingStore(store::Store& inner) : ForwardingStore(inner) {}

  // Every commit fails from now on (true) or none does (false); forgets a chosen few.
  void fail_commits(bool fail);
  // Of the next commits, the k-th (from 0) fails when bit k of `which` is set; those after the
  // 64th succeed. Ends failing every commit.
  void fail_next_commits(std::uint64_t which);
  // Only the next commit fails.
  void fail_next_commit() { fail_next_commits(1); }

  std::int64_t commits_tried() const;
  std::int64_t commits_failed() const;
  bool committed_job(JobId id) const;
  // The events of the commits that failed since the last call, oldest first.
  std::vector<store::Event> take_failed_events();

  void commit(std::span<const store::Change> batch) override;

 private:
  bool fails_now(std::span<const store::Change> batch);  // under mutex_; counts the commit

  mutable std::mutex mutex_;
  bool failing_all_ = false;
  std::uint64_t chosen_ = 0;  // bit k: the k-th commit from `chosen_from_` fails
  std::int64_t chosen_from_ = 0;
  std::int64_t tried_ = 0;
  std::int64_t failed_ = 0;
  std::set<JobId> committed_jobs_;
  std::vector<store::Event> failed_events_;
};

}  // namespace trainyard
