#include "daemon/request_turns.h"

namespace trainyard::daemon {

void RequestTurns::take(const std::string& key, Request request) {
  const auto [it, none_running] = queued_.try_emplace(key);
  if (!none_running) {
    it->second.push_back(std::move(request));
    return;
  }
  run(key, std::move(request));
}

void RequestTurns::run(const std::string& key, Request request) {
  request([this, key] { next(key); });
}

void RequestTurns::next(const std::string& key) {
  const auto it = queued_.find(key);
  if (it == queued_.end()) return;
  if (it->second.empty()) {
    queued_.erase(it);
    return;
  }
  Request request = std::move(it->second.front());
  it->second.pop_front();
  run(key, std::move(request));
}

std::size_t RequestTurns::waiting() const {
  std::size_t n = 0;
  for (const auto& [key, queue] : queued_) n += queue.size();
  return n;
}

}  // namespace trainyard::daemon
