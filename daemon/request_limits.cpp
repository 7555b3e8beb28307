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

net::Caller connection_caller(const Principal& who) { return net::Caller{who.user, who.may(Action::use_gateway)}; }

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

void add_user_limit_flags(FlagParser& flags, UserLimits& limits) {
  RateLimit& rate = limits.rate;
  flags.add_int(
      "rate-limit-rps",
      "API requests per second each user may make on average (a token bucket); over it, 429 with "
      "Retry-After; 0: no limit",
      0, 1'000'000, [&rate] { return std::llround(rate.per_second); },
      [&rate](std::int64_t rps) { rate.per_second = static_cast<double>(rps); });
  flags.add_int(
      "rate-limit-burst", "API requests a user may make at once after a quiet spell", 1, 10'000'000,
      [&rate] { return std::llround(rate.burst); },
      [&rate](std::int64_t burst) { rate.burst = static_cast<double>(burst); });
  flags.add_int(
      "rate-limit-admins", "1: admins are rate-limited too; 0: they are exempt", 0, 1,
      [&rate] { return std::int64_t{rate.include_admins}; },
      [&rate](std::int64_t on) { rate.include_admins = on == 1; });
  flags.add_int("max-pending-per-user",
                "jobs one user may have waiting at once; a submission over it gets 429; 0: no "
                "cap; admins and canaries are exempt",
                &limits.max_pending_per_user, 0, 100'000'000);
  flags.add_int("max-user-priority",
                "the highest priority a user other than an admin may give a job at submission or "
                "with PATCH; higher is refused with 400",
                &limits.max_user_priority, 0, 9999);
}

}  // namespace trainyard::daemon
