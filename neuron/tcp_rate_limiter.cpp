#include "neuron/tcp_rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace trainyard::neuron {
namespace {
constexpr double kBurstSeconds = 0.01;
constexpr double kMinBurstBytes = 1500;
}  // namespace

SendRateLimiter::SendRateLimiter(double bytes_per_s, SteadyTime start)
    : rate_(bytes_per_s), burst_(std::max(kMinBurstBytes, bytes_per_s * kBurstSeconds)), tokens_(burst_), last_(start) {}

std::size_t SendRateLimiter::allowance(SteadyTime now) {
  if (now > last_) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * rate_);
    last_ = now;
  }
  return static_cast<std::size_t>(std::floor(tokens_));
}

void SendRateLimiter::consume(std::size_t bytes) { tokens_ -= static_cast<double>(bytes); }

SteadyTime SendRateLimiter::ready_at(std::size_t wanted) const {
  const double missing = std::min(static_cast<double>(wanted), burst_) - tokens_;
  if (missing <= 0) return last_;
  return last_ + std::chrono::ceil<SteadyTime::duration>(std::chrono::duration<double>(missing / rate_));
}

}  // namespace trainyard::neuron
