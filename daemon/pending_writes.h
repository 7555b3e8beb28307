#pragma once
// The daemon's own changes (an attempt's end, a node going DOWN, a retry, a verdict) stored in the
// order they were made, also across a while the store's commits fail (issue 53). A change whose
// commit fails waits here with its continuation and is tried again from the tick, with a backoff
// that doubles up to a cap; while any waits, later changes queue behind it, and once one is stored
// the next goes at once. Each continuation runs once, when its change is stored, so nothing is acted
// on before it is durable and nothing twice. Changes an API caller asked for do not come here: they
// are refused instead (JobManager::persist_requested), and refused before they are made while
// changes wait here (`waiting`), so none overtakes one of these.
//
// Writes in flight when the store starts failing may still commit after one that failed before
// them: the order holds from the first failure the I/O thread has heard of.
//
// Threading contract: I/O thread only.
#include <cstdint>
#include <functional>
#include <map>

#include "daemon/base/store_worker.h"
#include "proto/time.h"

namespace trainyard::daemon {

class PendingWrites {
 public:
  static constexpr Millis kFirstRetry{250};
  static constexpr Millis kLongestRetry{5000};

  PendingWrites(StoreWorker& store, const TimeSource& clock) : store_(store), clock_(clock) {}

  // Writes the change, or queues it behind those waiting; `then` (may be empty) runs once stored.
  void write(store::Change change, std::function<void()> then);
  // Tries the oldest waiting change again if its backoff is over (from the tick).
  void retry_due();
  // Whether changes wait to be stored (the one being tried again included), and how many.
  bool waiting() const { return retrying_ || !waiting_.empty(); }
  std::size_t size() const { return waiting_.size() + (retrying_ ? 1 : 0); }

 private:
  struct Entry {
    store::Change change;
    std::function<void()> then;
  };
  void send(std::uint64_t seq, Entry entry, bool retry);
  void send_oldest();

  StoreWorker& store_;
  const TimeSource& clock_;
  std::uint64_t next_seq_ = 0;
  std::map<std::uint64_t, Entry> waiting_;  // by the order the changes were made
  bool retrying_ = false;
  Millis backoff_{0};
  MonoTime next_try_{};
};

}  // namespace trainyard::daemon
