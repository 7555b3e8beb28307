#include "proto/backoff.h"

#include <algorithm>

namespace trainyard::inline proto {

Millis backoff_ceiling(const BackoffPolicy& policy, int n) {
  const Millis cap = std::max(policy.first, policy.cap);
  // Doubling stops at the cap long before 2^n overflows.
  Millis wait = policy.first;
  for (int i = 1; i < n && wait < cap; ++i) wait *= 2;
  return std::min(wait, cap);
}

Millis backoff_wait(const BackoffPolicy& policy, int n, std::mt19937_64& rng) {
  const Millis ceiling = backoff_ceiling(policy, n);
  switch (policy.jitter) {
    case Jitter::none: return ceiling;
    case Jitter::full: return Millis(std::uniform_int_distribution<Millis::rep>(0, ceiling.count())(rng));
    case Jitter::equal: {
      const Millis::rep half = ceiling.count() / 2;
      return Millis(half + std::uniform_int_distribution<Millis::rep>(0, ceiling.count() - half)(rng));
    }
  }
  return ceiling;
}

Backoff::Backoff(BackoffPolicy policy, std::uint64_t seed) : policy_(policy), rng_(seed) {}

Millis Backoff::after_failure() {
  if (failures_ < 64) ++failures_;
  return backoff_wait(policy_, failures_, rng_);
}

}  // namespace trainyard::proto
