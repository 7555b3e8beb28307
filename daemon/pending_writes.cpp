#include "daemon/pending_writes.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace trainyard::daemon {

void PendingWrites::write(store::Change change, std::function<void()> then) {
  const std::uint64_t seq = next_seq_++;
  if (waiting()) {
    waiting_.emplace(seq, Entry{std::move(change), std::move(then)});
    return;
  }
  send(seq, Entry{std::move(change), std::move(then)}, false);
}

void PendingWrites::retry_due() {
  if (retrying_ || waiting_.empty() || clock_.monotonic_now() < next_try_) return;
  send_oldest();
}

void PendingWrites::send_oldest() {
  auto oldest = waiting_.begin();
  const std::uint64_t seq = oldest->first;
  Entry entry = std::move(oldest->second);
  waiting_.erase(oldest);
  retrying_ = true;
  send(seq, std::move(entry), true);
}

void PendingWrites::send(std::uint64_t seq, Entry entry, bool retry) {
  store_.write(std::move(entry.change), [this, seq, retry, then = std::move(entry.then)](const Result<void>& written,
                                                                                        store::Change& committed) mutable {
    if (retry) retrying_ = false;
    if (!written) {
      // Kept whole (the worker hands a failed change back untouched) at its place in the order.
      waiting_.emplace(seq, Entry{std::move(committed), std::move(then)});
      // Every change of a failing batch fails together: only a failed retry makes the wait longer.
      backoff_ = retry ? std::clamp(2 * backoff_, kFirstRetry, kLongestRetry) : std::max(backoff_, kFirstRetry);
      next_try_ = clock_.monotonic_now() + backoff_;
      spdlog::error("event=change_waits_for_store waiting={} retry_in_ms={} error=\"{}\"", size(), backoff_.count(),
                    written.error().message);
      return;
    }
    if (retry) {
      backoff_ = Millis(0);
      spdlog::info("event=waiting_change_stored still_waiting={}", waiting_.size());
    }
    if (then) then();
    if (retry && !retrying_ && !waiting_.empty()) send_oldest();
  });
}

}  // namespace trainyard::daemon
