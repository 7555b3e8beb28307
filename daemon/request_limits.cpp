#include "daemon/request_limits.h"

#include <algorithm>
#include <cmath>

namespace trainyard::daemon {

TokenBucket::TokenBucket(double per_second, double burst, MonoTime now)
    : per_second_(per_second), burst_(burst), tokens_(burst), refilled_at_(now) {}

std::optional<Millis> TokenBucket::take(MonoTime now) {
  const double elapsed_s = std::chrono::duration<double>(now - refilled_at_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed_s * per_second_);
  refilled_at_ = now;
  if (tokens_ >= 1.0) {
    tokens_ -= 1.0;
    return std::nullopt;
  }
  // The epsilon keeps a wait of exactly n ms, computed as n plus a rounding error, at n.
  return Millis(static_cast<std::int64_t>(std::ceil((1.0 - tokens_) / per_second_ * 1000.0 - 1e-6)));
}

std::optional<std::int64_t> RateLimiter::admit(const Principal& who, MonoTime now) {
  if (limit_.per_second <= 0 || ((who.role == store::Role::admin) && !limit_.include_admins)) return std::nullopt;
  auto it = buckets_.try_emplace(who.user, limit_.per_second, limit_.burst, now).first;
  const auto wait = it->second.take(now);
  if (!wait) return std::nullopt;
  return std::max<std::int64_t>(1, (wait->count() + 999) / 1000);
}

Result<void> check_pending_cap(const Principal& who, std::size_t cap,
                               const std::function<std::size_t()>& pending_count) {
  if (cap == 0 || (who.role == store::Role::admin)) return {};
  const std::size_t pending = pending_count();
  if (pending < cap) return {};
  return Error::too_many_pending("user " + who.user + " already has " + std::to_string(pending) +
                                 " pending jobs, the most one user may have waiting (--max-pending-per-user " +
                                 std::to_string(cap) + "); cancel some or wait for them to start");
}

Result<void> check_priority_ceiling(const Principal& who, int priority, int ceiling) {
  if (who.role == store::Role::admin || priority <= ceiling) return {};
  return Error::invalid_input("priority", "must be at most " + std::to_string(ceiling) +
                                              " for users (--max-user-priority); an admin may set more");
}

}  // namespace trainyard::daemon
