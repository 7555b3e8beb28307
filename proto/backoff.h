#pragma once
// One exponential backoff for every loop that tries again: the agent's reconnects, the server's
// accept loop, the CLI's event follow, webhook deliveries and a job's retries. The n-th wait in a
// row is `first * 2^(n-1)`, capped; jitter spreads many clients that failed together (AWS's
// "Exponential Backoff And Jitter"): full draws it from [0, wait], equal from [wait/2, wait], so a
// loop that must not come back sooner than half its wait keeps that. Pure: randomness is passed in
// or seeded by the caller.
#include <cstdint>
#include <random>

#include "proto/time.h"

namespace trainyard::inline proto {

enum class Jitter { none, full, equal };

struct BackoffPolicy {
  Millis first{1000};
  Millis cap{60'000};
  Jitter jitter = Jitter::none;
};

// The n-th wait in a row (n >= 1; below 1 counts as 1) before jitter: min(cap, first * 2^(n-1)),
// never overflowing however large n is.
Millis backoff_ceiling(const BackoffPolicy& policy, int n);
// The n-th wait, jittered as the policy says by `rng`.
Millis backoff_wait(const BackoffPolicy& policy, int n, std::mt19937_64& rng);

// A run of failures in a row: each wait grows, a success starts again from the first.
class Backoff {
 public:
  explicit Backoff(BackoffPolicy policy, std::uint64_t seed = std::random_device{}());
  // The wait before the next try after one more failure.
  Millis after_failure();
  void after_success() { failures_ = 0; }
  int failures() const { return failures_; }
  const BackoffPolicy& policy() const { return policy_; }

 private:
  BackoffPolicy policy_;
  int failures_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace trainyard::proto
