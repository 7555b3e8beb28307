#include "daemon/file_worker.h"

#include <spdlog/spdlog.h>

namespace trainyard::daemon {

FileWorker::FileWorker(PostToIo post_to_io) : post_to_io_(std::move(post_to_io)), thread_([this] { loop(); }) {}

FileWorker::~FileWorker() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void FileWorker::run(Task task, Failed failed) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(Queued{std::move(task), std::move(failed)});
  }
  wake_.notify_one();
}

void FileWorker::loop() {
  for (;;) {
    Queued next;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      post_to_io_(next.task());
    } catch (const std::exception& e) {
      spdlog::error("event=file_task_failed error=\"{}\"", e.what());
      post_to_io_([failed = std::move(next.failed), error = Error::internal(e.what())] { failed(error); });
    }
  }
}

}  // namespace trainyard::daemon
