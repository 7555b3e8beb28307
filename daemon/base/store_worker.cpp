#include "daemon/base/store_worker.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include <spdlog/spdlog.h>

#include <chrono>

#include "daemon/base/changed_entities.h"
#include "proto/time.h"

namespace trainyard::daemon {

StoreWorker::StoreWorker(store::Store& store, PostToIo post_to_io)
    : store_(store), post_to_io_(std::move(post_to_io)), thread_([this] { run(); }) {}

StoreWorker::~StoreWorker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void StoreWorker::write(store::Change change, WriteDone done) {
  {
    std::lock_guard lock(mutex_);
    // Braces: Clang 14 has no parenthesized aggregate initialisation (C++20's P0960).
    queue_.emplace_back(Write{std::move(change), std::move(done), failures_heard_->load(std::memory_order_acquire)});
  }
  wake_.notify_one();
}

void StoreWorker::read(ReadTask task, ReadFailed failed) {
  {
    std::lock_guard lock(mutex_);
    queue_.emplace_back(Read{std::move(task), std::move(failed)});
  }
  wake_.notify_one();
}

void StoreWorker::refuse_made_on_failed(std::vector<Write>& writes) {
  if (failed_at_.empty() || writes.empty()) return;
  // A failure every write still to come had heard of is forgotten. Not the I/O thread's count now:
  // it may have heard of one since these writes were made.
  std::uint64_t oldest_made = UINT64_MAX;
  for (const Write& w : writes) oldest_made = std::min(oldest_made, w.failures_heard);
  std::erase_if(failed_at_, [oldest_made](const auto& entry) { return entry.second <= oldest_made; });
  if (failed_at_.empty()) return;
  const std::uint64_t refusal = failures_ + 1;  // the number fail() gives the refused ones
  Done refused;
  std::string first_failed;
  std::vector<Write> kept;
  for (Write& w : writes) {
    const std::vector<std::string> entities = changed_entities(w.change);
    const auto failed = std::find_if(entities.begin(), entities.end(), [&](const std::string& entity) {
      const auto it = failed_at_.find(entity);
      return it != failed_at_.end() && it->second > w.failures_heard;
    });
    if (failed == entities.end()) {
      kept.push_back(std::move(w));
      continue;
    }
    if (first_failed.empty()) first_failed = *failed;
    // A later write of this batch made on top of this one is refused in turn.
    for (const std::string& entity : entities) failed_at_[entity] = refusal;
    refused.changes.push_back(std::move(w.change));
    refused.callbacks.push_back(std::move(w.done));
  }
  writes = std::move(kept);
  if (refused.changes.empty()) return;
  spdlog::warn("event=store_change_refused_after_failure changes={} entity={}", refused.changes.size(), first_failed);
  fail(std::move(refused), Error::unavailable("not stored: it was made on top of an earlier change to " + first_failed +
                                              " that could not be stored"));
}

void StoreWorker::commit_batch(std::vector<Write>& writes) {
  refuse_made_on_failed(writes);
  if (writes.empty()) return;
  Done done;
  done.changes.reserve(writes.size());
  done.callbacks.reserve(writes.size());
  for (auto& w : writes) {
    if (w.change.job_records.empty()) {
      for (const Job& job : w.change.jobs) w.change.job_records.push_back(store::job_record(job));
    }
    done.changes.push_back(std::move(w.change));
    done.callbacks.push_back(std::move(w.done));
  }
  writes.clear();
  // Nothing commits after a change whose outcome is unknown until it is known: a later change was
  // made from memory without it, and would overwrite it had it been stored.
  if (in_doubt_ && !resolve_in_doubt()) {
    return fail(std::move(done), Error::unavailable("not stored: the store has yet to say whether an earlier change (transaction " +
                                                         in_doubt_->transaction + ") was stored"));
  }
  Result<void> written;
  try {
    const auto began = std::chrono::steady_clock::now();
    store_.commit(done.changes);
    if (observe_commit_) {
      observe_commit_(std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count(), done.changes.size());
    }
  } catch (const store::LeaseLost& e) {
    if (on_lease_lost_) on_lease_lost_(e.what());
    written = Error::unavailable(e.what());
  } catch (const store::CommitInDoubt& e) {
    // Neither answer would be true yet: the writers wait (their requests unanswered) until the store
    // says; the outcome observer hears of the failure now.
    spdlog::error("event=store_commit_in_doubt changes={} transaction={} error=\"{}\"", done.changes.size(),
                  e.transaction(), e.what());
    in_doubt_ = InDoubt{e.transaction(), std::move(done)};
    post_to_io_([observe = observe_outcome_, error = Error::unavailable(e.what())] {
      if (observe) observe(error);
    });
    return;
  } catch (const std::exception& e) {
    spdlog::error("event=store_commit_failed changes={} error=\"{}\"", done.changes.size(), e.what());
    written = Error::unavailable(e.what());
  }
  if (!written.ok()) return fail(std::move(done), written.error());
  ++commits_;
  hand_back(std::move(done), written);
}

bool StoreWorker::resolve_in_doubt() {
  const std::optional<bool> committed = store_.was_committed(in_doubt_->transaction);
  if (!committed) return false;
  spdlog::warn("event=store_commit_resolved transaction={} stored={} changes={}", in_doubt_->transaction, *committed,
               in_doubt_->done.changes.size());
  Done done = std::move(in_doubt_->done);
  in_doubt_.reset();
  if (!*committed) {
    fail(std::move(done), Error::unavailable("the change was not stored"));
    return true;
  }
  ++commits_;
  hand_back(std::move(done), Result<void>());
  return true;
}

void StoreWorker::fail(Done done, const Error& error) {
  const std::uint64_t number = ++failures_;
  for (const store::Change& change : done.changes) {
    for (std::string& entity : changed_entities(change)) failed_at_[std::move(entity)] = number;
  }
  hand_back(std::move(done), Result<void>(error), number);
}

void StoreWorker::hand_back(Done done, Result<void> written, std::uint64_t failure) {
  // The committed events go to the events observer, not to the writers' callbacks, which never
  // read them.
  std::vector<store::Event> committed_events;
  if (written.ok() && observe_events_) {
    for (store::Change& change : done.changes) {
      std::move(change.events.begin(), change.events.end(), std::back_inserter(committed_events));
      change.events.clear();
    }
  }
  // A copy: the worker may be gone when the I/O thread runs this (its destructor finishes the queue).
  post_to_io_([observe = observe_outcome_, done = std::move(done), written, failure, heard = failures_heard_]() mutable {
    if (observe) observe(written);
    if (written.ok()) {
      for (std::size_t i = 0; i < done.callbacks.size(); ++i) {
        if (done.callbacks[i]) done.callbacks[i](written, done.changes[i]);
      }
      return;
    }
    // Last first: each writer that puts memory back finds it as it left it.
    for (std::size_t i = done.callbacks.size(); i-- > 0;) {
      if (done.callbacks[i]) done.callbacks[i](written, done.changes[i]);
    }
    // Only now: a change made by the completions above was made before memory was whole again.
    heard->store(failure, std::memory_order_release);
  });
  if (!committed_events.empty()) publish_committed_events(std::move(committed_events));
}

void StoreWorker::publish_committed_events(std::vector<store::Event> written) {
  try {
    // Reading the rows back cost 8% of the daemon's CPU per submission; one MAX(seq) is cheap.
    const std::int64_t last = store_.last_event_seq();
    if (last - events_head_ == static_cast<std::int64_t>(written.size())) {
      for (store::Event& event : written) {
        event.seq = ++events_head_;
        event.at = from_unix_ms(to_unix_ms(event.at));  // as stored: to the millisecond
      }
      post_to_io_([observe = observe_events_, events = std::move(written)] { observe(events); });
      return;
    }
  } catch (const std::exception& e) {
    spdlog::warn("event=last_event_seq_failed error=\"{}\"", e.what());
  }
  constexpr int kPage = 1000;
  std::vector<store::Event> events;
  try {
    // A short page is the last: no query more per commit to find an empty one.
    for (std::size_t got = kPage; got == kPage;) {
      std::vector<store::Event> page = store_.events_after(events_head_, kPage);
      got = page.size();
      if (page.empty()) break;
      events_head_ = page.back().seq;
      std::move(page.begin(), page.end(), std::back_inserter(events));
    }
  } catch (const std::exception& e) {
    // The events stay stored; the next commit's read-back hands them over.
    spdlog::error("event=committed_events_read_failed after_seq={} error=\"{}\"", events_head_, e.what());
  }
  if (events.empty()) return;
  post_to_io_([observe = observe_events_, events = std::move(events)] { observe(events); });
}

void StoreWorker::run() {
  std::vector<Write> writes;
  std::vector<Task> batch;  // swapped with `queue_`, so both buffers are reused
  for (;;) {
    batch.clear();
    {
      std::unique_lock lock(mutex_);
      const auto has_work = [this] { return stopping_ || !queue_.empty(); };
      // A change in doubt is asked after while nothing else comes, so its writers are answered once
      // the store is back.
      if (in_doubt_) {
        wake_.wait_for(lock, kInDoubtRetry, has_work);
      } else {
        wake_.wait(lock, has_work);
      }
      if (queue_.empty() && stopping_) return give_up_in_doubt();
      batch.swap(queue_);
    }
    if (in_doubt_ && batch.empty()) {
      resolve_in_doubt();
      continue;
    }
    for (auto& task : batch) {
      if (auto* w = std::get_if<Write>(&task)) {
        writes.push_back(std::move(*w));
        continue;
      }
      commit_batch(writes);  // a read sees every write queued before it
      auto& r = std::get<Read>(task);
      try {
        post_to_io_(r.task(store_));
      } catch (const store::LeaseLost& e) {
        if (on_lease_lost_) on_lease_lost_(e.what());
        post_to_io_([failed = std::move(r.failed), error = Error::unavailable(e.what())] { failed(error); });
      } catch (const store::StoreError& e) {
        // The store could not be reached or read (a stopped server, an I/O error): worth asking again.
        spdlog::error("event=store_read_failed error=\"{}\"", e.what());
        post_to_io_([failed = std::move(r.failed), error = Error::unavailable(e.what())] { failed(error); });
      } catch (const std::exception& e) {
        spdlog::error("event=store_read_failed error=\"{}\"", e.what());
        post_to_io_([failed = std::move(r.failed), error = Error::internal(e.what())] { failed(error); });
      }
    }
    commit_batch(writes);
  }
}

void StoreWorker::give_up_in_doubt() {
  if (!in_doubt_ || resolve_in_doubt()) return;
  // Answering either way could be untrue: the writers are left unanswered (their connections close
  // with the daemon), and whoever loads the store next finds what it holds.
  spdlog::error("event=store_commit_in_doubt_at_exit transaction={} changes={}", in_doubt_->transaction,
                in_doubt_->done.changes.size());
  in_doubt_.reset();
}

}  // namespace trainyard::daemon
