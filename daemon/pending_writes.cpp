#include "daemon/pending_writes.h"

#include <spdlog/spdlog.h>

#include "daemon/base/changed_entities.h"

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

bool PendingWrites::carried_later(std::uint64_t place, const std::vector<std::string>& entities) const {
  for (auto it = unstored_entities_.upper_bound(place); it != unstored_entities_.end(); ++it) {
    for (const std::string& entity : it->second) {
      if (std::binary_search(entities.begin(), entities.end(), entity)) return true;
    }
  }
  return false;
}

void PendingWrites::adopt(std::uint64_t place, store::Change change, std::function<void()> then) {
  unstored_entities_.emplace(place, changed_entities(change));
  wait_to_retry(place, Entry{std::move(change), std::move(then)}, false);
}

void PendingWrites::wait_to_retry(std::uint64_t seq, Entry entry, bool retried) {
  waiting_.emplace(seq, std::move(entry));
  // Every change of a failing batch fails together: only a failed retry makes the wait longer.
  if (retried || backoff_.failures() == 0) wait_ = backoff_.after_failure();
  next_try_ = clock_.monotonic_now() + wait_;
}

void PendingWrites::send(std::uint64_t seq, Entry entry, bool retry) {
  if (!retry) unstored_entities_.emplace(seq, changed_entities(entry.change));
  store_.write(std::move(entry.change), [this, seq, retry, then = std::move(entry.then)](const Result<void>& written,
                                                                                        store::Change& committed) mutable {
    if (retry) retrying_ = false;
    if (!written) {
      // Kept whole (the worker hands a failed change back untouched) at its place in the order.
      wait_to_retry(seq, Entry{std::move(committed), std::move(then)}, retry);
      spdlog::error("event=change_waits_for_store waiting={} retry_in_ms={} error=\"{}\"", size(), wait_.count(),
                    written.error().message);
      return;
    }
    unstored_entities_.erase(seq);
    if (retry) {
      backoff_.after_success();
      spdlog::info("event=waiting_change_stored still_waiting={}", waiting_.size());
    }
    if (then) then();
    if (retry && !retrying_ && !waiting_.empty()) send_oldest();
  });
}

}  // namespace trainyard::daemon
