#include "net/accept_policy.h"

#include <algorithm>
#include <utility>

namespace trainyard::net {

std::optional<std::uint64_t> RateLimitedLog::occurred(SteadyTime now) {
  if (last_written_ && now - *last_written_ < interval_) {
    ++suppressed_;
    return std::nullopt;
  }
  last_written_ = now;
  return std::exchange(suppressed_, 0);
}

const char* to_string(Admission a) {
  switch (a) {
    case Admission::admitted: return "admitted";
    case Admission::over_total: return "over_total_cap";
    case Admission::over_per_address: return "over_per_ip_cap";
    case Admission::over_per_caller: return "over_per_user_cap";
  }
  return "admitted";
}

ConnectionLimits::Verdict ConnectionLimits::admit(Id id, const std::string& address) {
  Verdict verdict;
  if (open_from(address) >= caps_.per_address) {
    verdict.evict = oldest_evictable(address);
    if (!verdict.evict) return {Admission::over_per_address, std::nullopt};
  } else if (open() >= caps_.total) {
    verdict.evict = oldest_evictable();
    if (!verdict.evict) return {Admission::over_total, std::nullopt};
  }
  if (verdict.evict) release(*verdict.evict);
  const Connection& c = connections_.emplace(id, Connection{address, std::nullopt, true}).first->second;
  count(id, c);
  return verdict;
}

ConnectionLimits::Verdict ConnectionLimits::identify(Id id, const std::optional<Caller>& caller) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return {};
  Connection& c = it->second;
  const bool same = caller ? c.caller && c.caller->key == caller->key : !c.caller;
  if (same) {
    c.caller = caller;
    return {};
  }
  Verdict verdict;
  if (caller && !caller->agent && open_as(caller->key) >= caps_.per_caller) return {Admission::over_per_caller, std::nullopt};
  if (!caller && open_from(c.address) >= caps_.per_address) {
    verdict.evict = oldest_evictable(c.address);
    if (!verdict.evict) return {Admission::over_per_address, std::nullopt};
    release(*verdict.evict);
  }
  uncount(id, c);
  c.caller = caller;
  count(id, c);
  return verdict;
}

void ConnectionLimits::waiting(Id id, bool waiting) {
  const auto it = connections_.find(id);
  if (it == connections_.end() || it->second.waiting == waiting) return;
  uncount(id, it->second);
  it->second.waiting = waiting;
  count(id, it->second);
}

void ConnectionLimits::release(Id id) {
  const auto it = connections_.find(id);
  if (it == connections_.end()) return;
  uncount(id, it->second);
  connections_.erase(it);
}

std::size_t ConnectionLimits::open_from(const std::string& address) const {
  const auto it = anonymous_.find(address);
  return it == anonymous_.end() ? 0 : it->second;
}

std::size_t ConnectionLimits::open_as(const std::string& caller_key) const {
  const auto it = by_caller_.find(caller_key);
  return it == by_caller_.end() ? 0 : it->second;
}

void ConnectionLimits::count(Id id, const Connection& c) {
  if (c.caller) {
    ++by_caller_[c.caller->key];
    return;
  }
  ++anonymous_[c.address];
  if (!c.waiting) return;
  evictable_.insert(id);
  evictable_by_address_[c.address].insert(id);
}

void ConnectionLimits::uncount(Id id, const Connection& c) {
  // Each count goes when it reaches zero, so an address or caller seen once costs nothing after.
  const auto decrement = [](std::map<std::string, std::size_t>& counts, const std::string& key) {
    const auto it = counts.find(key);
    if (it != counts.end() && --it->second == 0) counts.erase(it);
  };
  if (c.caller) return decrement(by_caller_, c.caller->key);
  decrement(anonymous_, c.address);
  evictable_.erase(id);
  const auto of_address = evictable_by_address_.find(c.address);
  if (of_address == evictable_by_address_.end()) return;
  of_address->second.erase(id);
  if (of_address->second.empty()) evictable_by_address_.erase(of_address);
}

std::optional<ConnectionLimits::Id> ConnectionLimits::oldest_evictable(const std::string& address) const {
  const auto it = evictable_by_address_.find(address);
  if (it == evictable_by_address_.end() || it->second.empty()) return std::nullopt;
  return *it->second.begin();
}

std::optional<ConnectionLimits::Id> ConnectionLimits::oldest_evictable() const {
  if (evictable_.empty()) return std::nullopt;
  return *evictable_.begin();
}

}  // namespace trainyard::net
