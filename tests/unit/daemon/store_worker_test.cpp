// The store worker: group commit, read-your-writes ordering and failure propagation, observed
// through a Store whose first commit waits on a gate the test opens (no sleeping).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <stdexcept>

#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

// Blocks its first commit until `open()`, records the size of every committed batch, and fails
// the commit numbered `fail_commit` (1-based), if set.
class GatedStore final : public ForwardingStore {
 public:
  explicit GatedStore(int fail_commit = 0) : ForwardingStore(memory_), fail_commit_(fail_commit) {}

  void wait_until_blocked() {
    std::unique_lock lock(mutex_);
    ASSERT_TRUE(changed_.wait_for(lock, kWaitLimit, [this] { return blocked_; })) << "the first commit never started";
  }
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    changed_.notify_all();
  }
  std::vector<std::size_t> batches() {
    std::lock_guard lock(mutex_);
    return batches_;
  }

  void commit(std::span<const store::Change> batch) override {
    std::unique_lock lock(mutex_);
    const int number = ++commits_;
    if (number == 1) {
      blocked_ = true;
      changed_.notify_all();
      changed_.wait(lock, [this] { return open_; });
    }
    if (number == fail_commit_) throw store::StoreError("injected failure of commit " + std::to_string(number));
    batches_.push_back(batch.size());
    lock.unlock();
    ForwardingStore::commit(batch);
  }

 private:
  InMemoryStore memory_;  // built after the base, which only keeps its address until then
  const int fail_commit_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool blocked_ = false;
  bool open_ = false;
  int commits_ = 0;
  std::vector<std::size_t> batches_;
};

store::Change job_change(JobId id) {
  store::Change change;
  Job job;
  job.id = id;
  job.spec = command_spec(1);
  job.user = "alice";
  change.jobs.push_back(job);
  return change;
}

// Outcome of each write, by job id: "ok" or the error.
struct Outcomes {
  StoreWorker::WriteDone recorder(JobId id) {
    return [this, id](const Result<void>& written, store::Change&) {
      by_job[id] = written ? "ok" : written.error().message;
    };
  }
  std::map<JobId, std::string> by_job;
};

TEST(StoreWorker, WritesQueuedDuringACommitShareTheNextOne) {
  GatedStore store;
  IoQueue io;
  Outcomes outcomes;
  {
    StoreWorker worker(store, io.poster());
    worker.write(job_change(1), outcomes.recorder(1));
    store.wait_until_blocked();
    for (JobId id = 2; id <= 11; ++id) worker.write(job_change(id), outcomes.recorder(id));
    store.open();
    io.run_until([&] { return outcomes.by_job.size() == 11; });
    EXPECT_EQ(worker.commits(), 2u);
  }
  EXPECT_EQ(store.batches(), (std::vector<std::size_t>{1, 10})) << "ten writes queued behind a slow commit, one transaction";
  for (JobId id = 1; id <= 11; ++id) EXPECT_EQ(outcomes.by_job[id], "ok") << id;
}

TEST(StoreWorker, ReadSeesEveryWriteQueuedBeforeItAndNoneAfter) {
  GatedStore store;
  IoQueue io;
  Outcomes outcomes;
  std::vector<std::string> order;  // completions as the I/O thread runs them
  StoreWorker worker(store, io.poster());
  worker.write(job_change(1), outcomes.recorder(1));
  store.wait_until_blocked();
  worker.write(job_change(2), [&](const Result<void>&, store::Change&) { order.push_back("write 2"); });
  std::optional<bool> saw2, saw3;
  worker.read(
      [&](store::Store& s) {
        const bool has2 = s.job(2).has_value();
        const bool has3 = s.job(3).has_value();
        return StoreWorker::Continuation([&, has2, has3] {
          saw2 = has2;
          saw3 = has3;
          order.push_back("read");
        });
      },
      [](const Error& error) { ADD_FAILURE() << error.message; });
  worker.write(job_change(3), [&](const Result<void>&, store::Change&) { order.push_back("write 3"); });
  store.open();
  io.run_until([&] { return order.size() == 3; });
  EXPECT_EQ(saw2, true);
  EXPECT_EQ(saw3, false);
  EXPECT_EQ(order, (std::vector<std::string>{"write 2", "read", "write 3"}));
  EXPECT_EQ(store.batches(), (std::vector<std::size_t>{1, 1, 1})) << "a read splits the batch it sits in";
}

TEST(StoreWorker, FailedBatchFailsEveryWriteInItAndOnlyThose) {
  GatedStore store(/*fail_commit=*/2);
  IoQueue io;
  Outcomes outcomes;
  StoreWorker worker(store, io.poster());
  worker.write(job_change(1), outcomes.recorder(1));
  store.wait_until_blocked();
  for (JobId id = 2; id <= 6; ++id) worker.write(job_change(id), outcomes.recorder(id));
  store.open();
  io.run_until([&] { return outcomes.by_job.size() == 6; });
  worker.write(job_change(7), outcomes.recorder(7));
  io.run_until([&] { return outcomes.by_job.size() == 7; });

  EXPECT_EQ(outcomes.by_job[1], "ok");
  for (JobId id = 2; id <= 6; ++id) EXPECT_EQ(outcomes.by_job[id], "injected failure of commit 2") << id;
  EXPECT_EQ(outcomes.by_job[7], "ok") << "the worker carries on after a failed batch";
  bool done = false;
  std::vector<JobId> stored;
  worker.read(
      [&](store::Store& s) {
        std::vector<JobId> ids;
        for (JobId id = 1; id <= 7; ++id) {
          if (s.job(id)) ids.push_back(id);
        }
        return StoreWorker::Continuation([&, ids] {
          stored = ids;
          done = true;
        });
      },
      [](const Error& error) { ADD_FAILURE() << error.message; });
  io.run_until([&] { return done; });
  EXPECT_EQ(stored, (std::vector<JobId>{1, 7})) << "nothing of the failed batch is stored";
}

TEST(StoreWorker, AFailedBatchsWritersAreAnsweredLastFirst) {
  GatedStore store(/*fail_commit=*/2);
  IoQueue io;
  std::vector<JobId> answered;
  StoreWorker worker(store, io.poster());
  worker.write(job_change(1), [&](const Result<void>&, store::Change&) { answered.push_back(1); });
  store.wait_until_blocked();
  for (JobId id = 2; id <= 4; ++id) worker.write(job_change(id), [&, id](const Result<void>&, store::Change&) { answered.push_back(id); });
  store.open();
  io.run_until([&] { return answered.size() == 4; });
  EXPECT_EQ(answered, (std::vector<JobId>{1, 4, 3, 2})) << "each writer that puts memory back finds it as it left it";
}

// A change made before the I/O thread heard that an earlier change to the same job failed was made
// from memory holding that change: it is refused, and so is one made on top of it in turn; changes
// to other jobs, and one made once the failure was heard, are stored.
TEST(StoreWorker, AChangeMadeOnTopOfAFailedOneToTheSameThingIsRefused) {
  InMemoryStore memory;
  FailingStore store(memory);
  IoQueue io;
  Outcomes outcomes;
  StoreWorker worker(store, io.poster());
  store.fail_next_commit();
  worker.write(job_change(1), outcomes.recorder(1));
  ASSERT_TRUE(io.wait_until(std::chrono::steady_clock::now() + kWaitLimit)) << "the failed commit was never handed back";
  // Not heard yet: nothing has run on the I/O thread.
  std::map<std::string, std::string> late;
  const auto record = [&late](std::string name) {
    return [&late, name](const Result<void>& written, store::Change&) { late[name] = written ? "ok" : written.error().message; };
  };
  store::Change on_top = job_change(1);
  on_top.events.push_back(store::Event{.at = test_epoch(), .kind = "test.on_top"});
  worker.write(std::move(on_top), record("job 1 again"));
  worker.write(job_change(2), record("job 2"));
  io.run_until([&] { return late.size() == 2 && outcomes.by_job.size() == 1; });
  EXPECT_EQ(outcomes.by_job[1], "disk on fire (injected)");
  EXPECT_EQ(late["job 1 again"], "not stored: it was made on top of an earlier change to job/1 that could not be stored");
  EXPECT_EQ(late["job 2"], "ok");
  EXPECT_FALSE(memory.job(1).has_value());
  const std::vector<store::Event> events = memory.events_after(0, 10);
  EXPECT_TRUE(std::none_of(events.begin(), events.end(), [](const store::Event& e) { return e.kind == "test.on_top"; }))
      << "nothing of the refused change is stored";

  worker.write(job_change(1), record("job 1 once heard"));
  io.run_until([&] { return late.size() == 3; });
  EXPECT_EQ(late["job 1 once heard"], "ok");
  EXPECT_TRUE(memory.job(1).has_value());
}

TEST(StoreWorker, ACompletionGetsItsCommittedChangeWithTheJobRecordsRendered) {
  InMemoryStore store;
  IoQueue io;
  StoreWorker worker(store, io.poster());
  std::optional<store::Change> committed;
  worker.write(job_change(4), [&](const Result<void>& written, store::Change& change) {
    EXPECT_TRUE(written.ok());
    committed = std::move(change);
  });
  io.run_until([&] { return committed.has_value(); });
  ASSERT_EQ(committed->jobs.size(), 1u);
  EXPECT_EQ(committed->jobs[0].id, 4);
  EXPECT_EQ(committed->job_records, std::vector<std::string>{store::job_record(committed->jobs[0])});
}

TEST(StoreWorker, AReadTheStoreFailsIsUnavailableAndAnyOtherThrowAnInternalError) {
  InMemoryStore store;
  IoQueue io;
  StoreWorker worker(store, io.poster());
  std::optional<Error> store_failed, task_failed;
  worker.read([](store::Store&) -> StoreWorker::Continuation { throw store::StoreError("cannot read"); },
              [&](const Error& e) { store_failed = e; });
  worker.read([](store::Store&) -> StoreWorker::Continuation { throw std::out_of_range("map::at"); },
              [&](const Error& e) { task_failed = e; });
  io.run_until([&] { return store_failed.has_value() && task_failed.has_value(); });
  EXPECT_EQ(store_failed->code, ErrorCode::unavailable) << "a stopped server or an I/O error: worth asking again";
  EXPECT_EQ(store_failed->message, "cannot read");
  EXPECT_EQ(task_failed->code, ErrorCode::internal);
  EXPECT_EQ(task_failed->message, "map::at");
}

// Another daemon took the lease: every write (and a fenced read task) throws LeaseLost.
class FencedStore final : public ForwardingStore {
 public:
  FencedStore() : ForwardingStore(memory_) {}
  void commit(std::span<const store::Change>) override { throw store::LeaseLost("lease lost: epoch 3 is gone"); }

 private:
  InMemoryStore memory_;
};

TEST(StoreWorker, AFencedWriteOrReadTellsTheLeaseLostHandlerBeforeItFails) {
  FencedStore store;
  IoQueue io;
  Outcomes outcomes;
  std::mutex mutex;
  std::vector<std::string> heard;  // on the worker thread
  StoreWorker worker(store, io.poster());
  worker.set_lease_lost_handler([&](const std::string& reason) {
    std::lock_guard lock(mutex);
    heard.push_back(reason);
  });
  worker.write(job_change(1), outcomes.recorder(1));
  io.run_until([&] { return outcomes.by_job.size() == 1; });
  EXPECT_EQ(outcomes.by_job[1], "lease lost: epoch 3 is gone");
  std::optional<Error> failed;
  worker.read([](store::Store& s) -> StoreWorker::Continuation { s.commit({}); return [] {}; },
              [&](const Error& e) { failed = e; });
  io.run_until([&] { return failed.has_value(); });
  EXPECT_EQ(failed->code, ErrorCode::unavailable);
  std::lock_guard lock(mutex);
  EXPECT_EQ(heard, (std::vector<std::string>{"lease lost: epoch 3 is gone", "lease lost: epoch 3 is gone"}));
}

// The server went away after COMMIT was sent: the first commit throws CommitInDoubt, having stored
// its batch or not, and the store cannot say until `answer()`.
class InDoubtStore final : public ForwardingStore {
 public:
  explicit InDoubtStore(bool stored_anyway) : ForwardingStore(memory_), stored_anyway_(stored_anyway) {}
  void answer() { answers_ = true; }
  bool holds_job(JobId id) { return memory_.job(id).has_value(); }

  void commit(std::span<const store::Change> batch) override {
    if (first_.exchange(false)) {
      if (stored_anyway_) ForwardingStore::commit(batch);
      throw store::CommitInDoubt("731", "commit: server closed the connection unexpectedly");
    }
    ForwardingStore::commit(batch);
  }
  std::optional<bool> was_committed(const std::string& transaction) override {
    EXPECT_EQ(transaction, "731");
    if (!answers_) return std::nullopt;
    return stored_anyway_;
  }

 private:
  InMemoryStore memory_;  // built after the base, which only keeps its address until then
  const bool stored_anyway_;
  std::atomic<bool> first_{true};
  std::atomic<bool> answers_{false};
};

class StoreWorkerInDoubt : public ::testing::TestWithParam<bool> {};

TEST_P(StoreWorkerInDoubt, ItsWritersWaitForTheStoresWordAndNothingCommitsMeanwhile) {
  const bool stored_anyway = GetParam();
  InDoubtStore store(stored_anyway);
  IoQueue io;
  Outcomes outcomes;
  std::vector<std::string> observed;
  StoreWorker worker(store, io.poster());
  worker.set_outcome_observer([&](const Result<void>& written) { observed.push_back(written ? "ok" : "failed"); });
  worker.write(job_change(1), outcomes.recorder(1));
  io.run_until([&] { return observed.size() == 1; });
  EXPECT_EQ(observed[0], "failed") << "the store's trouble is heard at once";
  worker.write(job_change(2), outcomes.recorder(2));
  io.run_until([&] { return outcomes.by_job.contains(2); });
  EXPECT_FALSE(outcomes.by_job.contains(1)) << "neither answer is true yet";
  EXPECT_THAT(outcomes.by_job[2], ::testing::HasSubstr("has yet to say whether an earlier change"));
  EXPECT_FALSE(store.holds_job(2)) << "nothing commits after a change in doubt";

  store.answer();  // the worker asks again by itself, with nothing else queued
  io.run_until([&] { return outcomes.by_job.contains(1); });
  EXPECT_EQ(outcomes.by_job[1], stored_anyway ? "ok" : "the change was not stored");
  EXPECT_EQ(store.holds_job(1), stored_anyway);
  worker.write(job_change(3), outcomes.recorder(3));
  io.run_until([&] { return outcomes.by_job.contains(3); });
  EXPECT_EQ(outcomes.by_job[3], "ok");
  EXPECT_EQ(worker.commits(), stored_anyway ? 2u : 1u);
}

INSTANTIATE_TEST_SUITE_P(StoredOrNot, StoreWorkerInDoubt, ::testing::Bool());

// Counts the reads of committed events (on the worker thread).
class EventReadsCountingStore final : public ForwardingStore {
 public:
  EventReadsCountingStore() : ForwardingStore(memory_) {}
  std::vector<store::Event> events_after(std::int64_t seq, int limit) override {
    ++reads;
    return ForwardingStore::events_after(seq, limit);
  }
  std::atomic<int> reads{0};

 private:
  InMemoryStore memory_;
};

store::Change events_change(int n, const std::string& kind = "test.event") {
  store::Change change;
  for (int i = 0; i < n; ++i) change.events.push_back(store::Event{.at = test_epoch(), .kind = kind});
  return change;
}

TEST(StoreWorker, HandsOverEveryCommittedEventInSeqOrderWithoutReadingThemBack) {
  EventReadsCountingStore store;
  IoQueue io;
  std::vector<std::int64_t> seqs;
  StoreWorker worker(store, io.poster());
  worker.set_events_observer(0, [&](const std::vector<store::Event>& events) {
    for (const auto& e : events) seqs.push_back(e.seq);
  });
  int written = 0;
  worker.write(events_change(5), [&](const Result<void>&, store::Change&) { ++written; });
  io.run_until([&] { return written == 1 && seqs.size() == 5; });
  worker.write(events_change(2500), [&](const Result<void>&, store::Change&) { ++written; });
  io.run_until([&] { return written == 2 && seqs.size() == 2505; });
  EXPECT_EQ(store.reads, 0) << "the store's last seq said the batches' events were theirs alone";
  std::vector<std::int64_t> expected(2505);
  std::iota(expected.begin(), expected.end(), 1);
  EXPECT_EQ(seqs, expected);
  EXPECT_EQ(store.events_after(0, 3000).size(), 2505u);
}

// Events the worker did not write (here: stored before it started, past the head it was given)
// make the numbering not the batch's own: it reads them all back, once per page, in seq order.
TEST(StoreWorker, ReadsTheEventsBackWhenTheStoreHoldsMoreThanItsBatchWrote) {
  EventReadsCountingStore store;
  const store::Change earlier = events_change(3, "earlier.event");
  store.commit(std::span(&earlier, 1));
  IoQueue io;
  std::vector<std::string> kinds;
  std::vector<std::int64_t> seqs;
  StoreWorker worker(store, io.poster());
  worker.set_events_observer(0, [&](const std::vector<store::Event>& events) {
    for (const auto& e : events) {
      seqs.push_back(e.seq);
      kinds.push_back(e.kind);
    }
  });
  int written = 0;
  worker.write(events_change(2500), [&](const Result<void>&, store::Change&) { ++written; });
  io.run_until([&] { return written == 1 && seqs.size() == 2503; });
  EXPECT_EQ(store.reads, 3) << "pages of 1000, 1000 and a short one";
  std::vector<std::int64_t> expected(2503);
  std::iota(expected.begin(), expected.end(), 1);
  EXPECT_EQ(seqs, expected);
  EXPECT_EQ(kinds.front(), "earlier.event");
  EXPECT_EQ(kinds.back(), "test.event");
}

TEST(StoreWorker, DestructorFinishesQueuedWrites) {
  InMemoryStore store;
  IoQueue io;
  int completed = 0;
  {
    StoreWorker worker(store, io.poster());
    for (JobId id = 1; id <= 50; ++id)
      worker.write(job_change(id), [&](const Result<void>& written, store::Change&) { completed += written.ok(); });
  }
  io.run_ready();
  EXPECT_EQ(completed, 50);
  EXPECT_EQ(store.load().max_job_id, 50);
}

}  // namespace
}  // namespace trainyard::daemon::testing
