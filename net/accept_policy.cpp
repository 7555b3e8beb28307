#include "net/accept_policy.h"

#include <algorithm>
#include <utility>

namespace trainyard::net {

AcceptBackoff::AcceptBackoff(std::chrono::milliseconds first, std::chrono::milliseconds ceiling)
    : first_(first), ceiling_(std::max(first, ceiling)), next_(first) {}

std::chrono::milliseconds AcceptBackoff::after_failure() {
  const auto wait = next_;
  next_ = std::min(next_ * 2, ceiling_);
  return wait;
}

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
  }
  return "admitted";
}

Admission ConnectionLimits::admit(const std::string& address) {
  if (open_ >= caps_.total) return Admission::over_total;
  if (open_from(address) >= caps_.per_address) return Admission::over_per_address;
  ++by_address_[address];
  ++open_;
  return Admission::admitted;
}

void ConnectionLimits::release(const std::string& address) {
  auto it = by_address_.find(address);
  if (it == by_address_.end()) return;
  --open_;
  if (--it->second == 0) by_address_.erase(it);
}

std::size_t ConnectionLimits::open_from(const std::string& address) const {
  auto it = by_address_.find(address);
  return it == by_address_.end() ? 0 : it->second;
}

}  // namespace trainyard::net
