#include "neuron/connection_quota.h"

#include <algorithm>

namespace trainyard::neuron {

ConnectionQuota::ConnectionQuota(ConnectionCaps caps)
    : caps_{std::max<std::size_t>(caps.total, 1),
            std::clamp<std::size_t>(caps.per_source, 1, std::max<std::size_t>(caps.total, 1))} {}

std::optional<int> ConnectionQuota::to_drop_for(const std::string& source) const {
  if (const auto own = by_source_.find(source); own != by_source_.end() && own->second.size() >= caps_.per_source) {
    return own->second.front();
  }
  if (held() < caps_.total) return std::nullopt;
  const auto largest = std::max_element(by_source_.begin(), by_source_.end(),
                                        [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  return largest->second.front();
}

void ConnectionQuota::add(int id, const std::string& source) {
  remove(id);
  source_of_[id] = source;
  by_source_[source].push_back(id);
}

void ConnectionQuota::remove(int id) {
  const auto it = source_of_.find(id);
  if (it == source_of_.end()) return;
  const auto ids = by_source_.find(it->second);
  std::erase(ids->second, id);
  if (ids->second.empty()) by_source_.erase(ids);
  source_of_.erase(it);
}

std::size_t ConnectionQuota::held_from(const std::string& source) const {
  const auto it = by_source_.find(source);
  return it == by_source_.end() ? 0 : it->second.size();
}

}  // namespace trainyard::neuron
