#pragma once
// Per-user limits on the API, kept pure (the time is passed in) so they are tested without I/O:
// - RateLimiter: a token bucket per token owner; a request finding its bucket empty is refused
//   with 429 and Retry-After. Admins are exempt unless the limit says otherwise, so the operator
//   (and the submit benchmark, which uses the admin token) is never throttled.
// - connection_caller: whose connection an authenticated request's is, for the connection caps.
// - check_pending_cap: how many of a user's jobs may wait at once, so one user cannot fill the
//   queue and the store. Canaries never pass through the API, so they are never refused.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "daemon/base/auth.h"
#include "net/accept_policy.h"
#include "proto/flag_parser.h"
#include "proto/result.h"
#include "proto/time.h"

namespace trainyard::daemon {

struct RateLimit {
  double per_second = 50;  // sustained requests per second; 0: no limit
  double burst = 200;      // requests that may come at once after a quiet spell
  bool include_admins = false;
};

class TokenBucket {
 public:
  // Starts full.
  TokenBucket(double per_second, double burst, MonoTime now);
  // Takes one token: nullopt when there was one, else how long until there is one.
  std::optional<Millis> take(MonoTime now);

 private:
  double per_second_;
  double burst_;
  double tokens_;
  MonoTime refilled_at_;
};

class RateLimiter {
 public:
  explicit RateLimiter(RateLimit limit) : limit_(limit) {}
  // Nullopt when `who` may make a request at `now`; else the whole seconds to wait (at least 1),
  // as Retry-After says them.
  std::optional<std::int64_t> admit(const Principal& who, MonoTime now);
  const RateLimit& limit() const { return limit_; }

 private:
  RateLimit limit_;
  // Keyed by the token's owner: a user's tokens share one bucket, so more tokens buy no more rate.
  std::unordered_map<std::string, TokenBucket> buckets_;
};

// Whether `who` may have one more job waiting under `cap` (0: no cap); else too_many_pending,
// naming the limit. Admins are exempt. `pending` counts `who`'s waiting jobs; it is asked only when
// the cap applies, since counting walks every active job.
Result<void> check_pending_cap(const Principal& who, std::size_t cap, const std::function<std::size_t()>& pending);

// Whether `who` may give a job `priority`: admins any, everyone else at most `ceiling`
// (--max-user-priority); else invalid_input naming the field, so a user cannot jump every queue.
Result<void> check_priority_ceiling(const Principal& who, int priority, int ceiling);

// How the HTTP server counts a connection whose request authenticated as `who`
// (net::ConnectionLimits): by its user, so more tokens buy no more connections; an agent's (join
// token or node credential) under the total cap only, never its address's, which a job on its
// node shares.
net::Caller connection_caller(const Principal& who);

struct UserLimits {
  RateLimit rate;
  std::size_t max_pending_per_user = 10'000;  // 0: no cap
  int max_user_priority = 0;
};

// The limits as the daemon's flags and config-file keys.
void add_user_limit_flags(FlagParser& flags, UserLimits& limits);

}  // namespace trainyard::daemon
