#pragma once
// Runs the blocking Store on its own thread so the I/O thread never blocks (docs/DESIGN.md "Concurrency"),
// and group-commits: every write queued while the previous commit was running goes
// into the next transaction together, so many submissions share one fsync.
//
// Ordering: tasks run in the order they were queued; a read sees every write queued before it.
// Completions are handed to `post_to_io`, which runs them on the I/O thread.
//
// A failed change fails what was made on top of it: a change to a job, node, share, webhook or
// token (daemon/base/changed_entities.h) made before the I/O thread had run the completions of an
// earlier failed change to the same thing is refused, not stored, since it was made from memory
// that still held the failed change (a cancel, say) and would store it. Its own refusal counts as a
// failure of those things in turn. The completions of a failed batch run last first, so each
// writer that puts memory back finds it as it left it.
//
// Job records are rendered here (Change::job_records), off the I/O thread, and the completion gets
// its committed change back to take apart: a submission answers with the stored text and keeps
// its Job without copying either.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "proto/result.h"
#include "store/store.h"

namespace trainyard::daemon {

class StoreWorker {
 public:
  using Continuation = std::function<void()>;
  using PostToIo = std::function<void(Continuation)>;
  // `written` fails (unavailable) when the transaction did not commit; `committed` is the change as
  // written, job_records filled in.
  using WriteDone = std::function<void(const Result<void>& written, store::Change& committed)>;
  // Runs on the worker thread; returns what to run on the I/O thread with the result.
  using ReadTask = std::function<Continuation(store::Store&)>;
  // The task threw: unavailable when the store failed (store::StoreError: worth asking again), else an
  // internal error; its message what the store said.
  using ReadFailed = std::function<void(const Error& error)>;

  StoreWorker(store::Store& store, PostToIo post_to_io);
  ~StoreWorker();  // finishes queued work, then joins
  StoreWorker(const StoreWorker&) = delete;
  StoreWorker& operator=(const StoreWorker&) = delete;

  void write(store::Change change, WriteDone done);
  void read(ReadTask task, ReadFailed failed);

  std::uint64_t commits() const { return commits_; }  // transactions so far (for metrics)
  // Called on the worker thread after each successful transaction with its duration and number of
  // changes. Set it before the first write.
  using CommitObserver = std::function<void(double seconds, std::size_t changes)>;
  void set_commit_observer(CommitObserver observe) { observe_commit_ = std::move(observe); }
  // Hears, on the I/O thread, of every transaction's outcome, before its writers' completions: what
  // tells whether the store's writes are failing (daemon/store_outage.h). Set it before the first write.
  using OutcomeObserver = std::function<void(const Result<void>& written)>;
  void set_outcome_observer(OutcomeObserver observe) { observe_outcome_ = std::move(observe); }
  // Hears, on the I/O thread, of every committed event as stored (seq filled in), in seq order.
  // The store numbers a batch's events consecutively inside commit; when its last seq is then
  // exactly as many past the head as the batch wrote, they are the batch's own, numbered in
  // order without reading them back; otherwise (a sequence that skipped, events written by
  // another) they are read back from the head. `head` is the highest seq stored before the first
  // write. Set it before the first write.
  using EventsObserver = std::function<void(const std::vector<store::Event>& events)>;
  void set_events_observer(std::int64_t head, EventsObserver observe) {
    events_head_ = head;
    observe_events_ = std::move(observe);
  }
  // Called on the worker thread when a write was fenced off (store::LeaseLost: another daemon took
  // the lease), before anything else is done; the active daemon ends there (exit_on_lease_lost).
  // Unset, the write fails as any other. Set it before the first write.
  using LeaseLostHandler = std::function<void(const std::string& reason)>;
  void set_lease_lost_handler(LeaseLostHandler handle) { on_lease_lost_ = std::move(handle); }

 private:
  struct Write {
    store::Change change;
    WriteDone done;
    std::uint64_t failures_heard = 0;  // of the I/O thread when the change was made
  };
  struct Read {
    ReadTask task;
    ReadFailed failed;
  };
  using Task = std::variant<Write, Read>;
  // A batch's changes and their writers' callbacks. It goes back to the I/O thread whole, in one
  // hand-over (a post per write cost the I/O thread a queued operation per submission), and is freed
  // there, by the thread that allocated its changes, rather than handing glibc's allocator a stream
  // of cross-thread frees. The job records rendered here are the exception: they leave as the
  // submissions' answers.
  struct Done {
    std::vector<store::Change> changes;
    std::vector<WriteDone> callbacks;
  };
  // A batch whose commit's answer was lost (store::CommitInDoubt): held until the store says.
  struct InDoubt {
    std::string transaction;
    Done done;
  };
  static constexpr std::chrono::milliseconds kInDoubtRetry{200};

  void run();
  void commit_batch(std::vector<Write>& writes);
  // Hands back, failed, the writes made on top of a failed change not yet heard of; counts as a
  // failure of what they change.
  void refuse_made_on_failed(std::vector<Write>& writes);
  // Asks the store about the batch in doubt; once it knows, hands it back as stored or not and
  // returns true.
  bool resolve_in_doubt();
  // At the worker's end: one last ask, else the writers are left unanswered.
  void give_up_in_doubt();
  void hand_back(Done done, Result<void> written, std::uint64_t failure = 0);
  // A failed hand-back: numbered, and what its changes touch remembered under that number.
  void fail(Done done, const Error& error);
  void publish_committed_events(std::vector<store::Event> written);

  store::Store& store_;
  PostToIo post_to_io_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Task> queue_;
  bool stopping_ = false;
  std::atomic<std::uint64_t> commits_{0};
  std::optional<InDoubt> in_doubt_;  // worker thread only
  std::uint64_t failures_ = 0;       // failed hand-backs so far (worker thread)
  // Per thing changed, the number of the newest failed change to it the I/O thread may not have
  // heard of (worker thread); emptied as it hears of them.
  std::map<std::string, std::uint64_t> failed_at_;
  // The number of the newest failed hand-back whose completions the I/O thread has run; shared, as
  // the I/O thread may run them after the worker is gone.
  std::shared_ptr<std::atomic<std::uint64_t>> failures_heard_ = std::make_shared<std::atomic<std::uint64_t>>(0);
  CommitObserver observe_commit_;
  OutcomeObserver observe_outcome_;
  std::int64_t events_head_ = 0;  // the last event seq handed to observe_events_
  EventsObserver observe_events_;
  LeaseLostHandler on_lease_lost_;
  std::thread thread_;
};

}  // namespace trainyard::daemon
