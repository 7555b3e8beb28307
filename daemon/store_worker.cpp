#include "daemon/store_worker.h"

#include <spdlog/spdlog.h>

namespace trainyard {

StoreWorker::StoreWorker(Store& store, PostToIo post_to_io)
    : store_(store), post_to_io_(std::move(post_to_io)), thread_([this] { run(); }) {}

StoreWorker::~StoreWorker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void StoreWorker::write(Change change, WriteDone done) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(Write{std::move(change), std::move(done)});
  }
  wake_.notify_one();
}

void StoreWorker::read(ReadTask task, ReadFailed failed) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(Read{std::move(task), std::move(failed)});
  }
  wake_.notify_one();
}

void StoreWorker::commit_batch(std::vector<Write>& writes) {
  if (writes.empty()) return;
  std::vector<Change> changes;
  changes.reserve(writes.size());
  for (auto& w : writes) changes.push_back(std::move(w.change));
  std::exception_ptr error;
  try {
    store_.commit(changes);
    ++commits_;
  } catch (const std::exception& e) {
    spdlog::error("event=store_commit_failed changes={} error=\"{}\"", changes.size(), e.what());
    error = std::current_exception();
  }
  for (auto& w : writes) {
    if (w.done) post_to_io_([done = std::move(w.done), error] { done(error); });
  }
  writes.clear();
}

void StoreWorker::run() {
  std::vector<Write> writes;
  for (;;) {
    std::deque<Task> batch;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty() && stopping_) return;
      batch.swap(queue_);
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
      } catch (const std::exception& e) {
        spdlog::error("event=store_read_failed error=\"{}\"", e.what());
        post_to_io_([failed = std::move(r.failed), msg = std::string(e.what())] { failed(msg); });
      }
    }
    commit_batch(writes);
  }
}

}  // namespace trainyard
