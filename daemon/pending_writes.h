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
// A change a caller asked for is made in memory before it is stored, so a change of the daemon's
// own to the same job, node or share made while the caller's is in flight carries it. When the
// caller's then fails, putting memory back would leave that later change to store it all the same:
// the caller's change is taken in here instead (`adopt`), in its place in the order, and its
// caller is answered once it is stored (the store worker refuses every change made on top of a
// failed one, so nothing overtakes it).
//
// Threading contract: I/O thread only.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "daemon/base/store_worker.h"
#include "proto/backoff.h"
#include "proto/time.h"

namespace trainyard::daemon {

class PendingWrites {
 public:
  static constexpr BackoffPolicy kRetries{Millis(250), Millis(5000)};

  PendingWrites(StoreWorker& store, const TimeSource& clock) : store_(store), clock_(clock) {}

  // Writes the change, or queues it behind those waiting; `then` (may be empty) runs once stored.
  void write(store::Change change, std::function<void()> then);
  // Tries the oldest waiting change again if its backoff is over (from the tick).
  void retry_due();
  // The place in the order of a change a caller asks for now, which `carried_later` and `adopt` take.
  std::uint64_t place_now() { return next_seq_++; }
  // Whether a change made after `place` to one of `entities` (changed_entities) is not stored yet.
  bool carried_later(std::uint64_t place, const std::vector<std::string>& entities) const;
  // Takes a caller's failed change to store in its place, as the daemon's own; `then` runs once it is.
  void adopt(std::uint64_t place, store::Change change, std::function<void()> then);
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
  void wait_to_retry(std::uint64_t seq, Entry entry, bool retried);

  StoreWorker& store_;
  const TimeSource& clock_;
  std::uint64_t next_seq_ = 0;
  std::map<std::uint64_t, Entry> waiting_;  // by the order the changes were made
  // What each change not yet stored (waiting or in flight) changes, by its place in the order.
  std::map<std::uint64_t, std::vector<std::string>> unstored_entities_;
  bool retrying_ = false;
  Backoff backoff_{kRetries};
  Millis wait_{0};  // the current wait between tries
  MonoTime next_try_{};
};

}  // namespace trainyard::daemon
