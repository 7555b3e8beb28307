#pragma once
// Runs file work (checkpoint scans of job directories) on its own thread, so the I/O thread never
// blocks on a filesystem and the store worker never waits behind one: a slow shared filesystem, or
// a job's hostile files, can delay checkpoint answers and resumes, never submits and reads.
//
// Ordering: tasks run in the order they were queued. Completions are handed to `post_to_io`.
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "proto/result.h"

namespace trainyard::daemon {

class FileWorker {
 public:
  using Continuation = std::function<void()>;
  using PostToIo = std::function<void(Continuation)>;
  // Runs on the worker thread; returns what to run on the I/O thread with the result.
  using Task = std::function<Continuation()>;
  using Failed = std::function<void(const Error& error)>;

  explicit FileWorker(PostToIo post_to_io);
  ~FileWorker();  // finishes queued work, then joins
  FileWorker(const FileWorker&) = delete;
  FileWorker& operator=(const FileWorker&) = delete;

  void run(Task task, Failed failed);

 private:
  struct Queued {
    Task task;
    Failed failed;
  };
  void loop();

  PostToIo post_to_io_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Queued> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace trainyard::daemon
