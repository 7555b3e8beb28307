#pragma once
// The I/O thread of a test or fuzz target: the store and file workers post completions into it from
// their own threads, and the test runs them on its own thread, when it chooses.
//
// Threading contract: the poster from any thread; the rest from the test's thread.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

namespace trainyard {

class IoQueue {
 public:
  using Completion = std::function<void()>;

  // What a worker posts its completions through (StoreWorker::PostToIo, FileWorker::PostToIo).
  std::function<void(Completion)> poster() {
    return [this](Completion fn) {
      {
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(fn));
      }
      ready_.notify_all();
    };
  }

  // Runs every queued completion, and those they queue; returns how many ran.
  int run_ready() {
    int ran = 0;
    for (;;) {
      Completion fn;
      {
        std::lock_guard lock(mutex_);
        if (queue_.empty()) return ran;
        fn = std::move(queue_.front());
        queue_.pop_front();
      }
      fn();
      ++ran;
    }
  }

  // Waits until a completion is queued; false when none was by `deadline`.
  bool wait_until(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    return ready_.wait_until(lock, deadline, [this] { return !queue_.empty(); });
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Completion> queue_;
};

}  // namespace trainyard
