#pragma once
// Token bucket that caps the send rate of a throttled data-plane link (LinkFault::throttle), so a
// simulated slow node shows up as low busbw in the collective health tests.
//
// Tokens (bytes) accrue at `rate` up to a burst of 10 ms worth (at least one TCP segment), so the
// long-run rate is the configured one while the sender still writes in reasonably sized pieces.
// Pure: the caller passes the time in.
#include <cstddef>

#include "neuron/tcp_socket.h"

namespace trainyard::neuron {

class SendRateLimiter {
 public:
  SendRateLimiter(double bytes_per_s, SteadyTime start);

  // Bytes that may be sent now.
  std::size_t allowance(SteadyTime now);
  void consume(std::size_t bytes);
  // Earliest time at which `wanted` bytes (at most one burst) may be sent.
  SteadyTime ready_at(std::size_t wanted) const;

  double burst_bytes() const { return burst_; }

 private:
  double rate_;
  double burst_;
  double tokens_;
  SteadyTime last_;
};

}  // namespace trainyard::neuron
