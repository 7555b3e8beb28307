#pragma once
// Ring collectives over TCP between the agents of one attempt (docs/DESIGN.md "Collectives and the data plane").
//
// Rank r keeps two connections: one it dials to its right neighbour (r+1) through that agent's
// data-plane port, and one its left neighbour (r-1) dialled into the local DataPlaneServer. They
// are opened by the first collective and reused. Each collective first swaps a small header with
// the neighbours (operation, sequence number, element count), so ranks that disagree fail loudly
// instead of summing garbage, then streams the ring schedule of tcp_ring_plan.h through one
// non-blocking poll loop that sends and receives at the same time and forwards each segment as
// soon as it has arrived (and been reduced), so all steps of the ring are in flight at once.
//
// Failures: a neighbour that makes no progress for `timeout` raises CollectiveError naming it,
// e.g. "rank 2 (127.0.0.1:4711) did not answer within 5000 ms"; a closed connection names the
// neighbour that closed. After a failure the communicator is unusable (the byte streams are out
// of step) and closes its sockets at once, so neighbours fail fast rather than time out.
// Link faults: `drop` fails every collective; `throttle` caps this rank's send rate.
//
// Threading contract: as Communicator (one calling thread). The DataPlaneClaims must outlive it.
#include <chrono>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "neuron/communicator.h"
#include "neuron/data_plane.h"
#include "neuron/tcp_rate_limiter.h"
#include "neuron/tcp_ring_plan.h"
#include "neuron/tcp_socket.h"
#include "proto/collective_bandwidth.h"
#include "proto/faults.h"

namespace trainyard::neuron {

struct TcpCommunicatorOptions {
  std::int64_t attempt_id = 0;
  int rank = 0;
  std::vector<std::string> peers;  // data-plane "host:port" of every rank, indexed by rank
  std::chrono::milliseconds timeout{30000};
  LinkFault link;
  int channel = 0;  // see DataPlaneHello::channel
  std::string secret;  // the attempt's data-plane secret: authenticates this ring's connections
  // When stop is requested, a collective that is waiting gives up within kStopPollInterval: a
  // rank killed while blocked on a hung peer must not wait out the whole timeout.
  std::stop_token stop;
  // How long the ring may take to form (connect to the right, hello, the left's connection in);
  // unset: `timeout`. Health checks set it short: their ranks start together, and a peer whose data
  // address answers but is not ours must not hold a job in STARTING for the whole timeout.
  std::optional<std::chrono::milliseconds> connect_timeout;
};

class TcpCommunicator final : public Communicator {
 public:
  static constexpr std::chrono::milliseconds kStopPollInterval{100};
  // Validates `options` (they come from a launch message): throws trainyard::InvalidInput naming
  // the field. Does not touch the network yet.
  TcpCommunicator(TcpCommunicatorOptions options, DataPlaneClaims& server);

  int rank() const override { return options_.rank; }
  int world_size() const override { return static_cast<int>(peers_.size()); }
  void all_reduce_sum(std::span<float> data) override;
  void all_gather(std::span<const float> mine, std::span<float> all) override;
  void reduce_scatter_sum(std::span<const float> input, std::span<float> mine) override;

 private:
  int left() const;
  int right() const;
  std::string describe(int peer) const;  // "rank 2 (127.0.0.1:4711)"
  // `data` receives the result; `source` (default: `data` itself) holds this rank's contribution.
  void run(CollectiveKind kind, std::span<float> data, const std::vector<RingStep>& steps,
           std::span<const float> source = {});
  void connect();
  void exchange_header(CollectiveKind kind, std::size_t elements);
  void transfer(std::span<float> data, std::span<const float> source, const std::vector<RingStep>& steps);
  [[noreturn]] void fail(int peer, const std::string& message, bool peer_closed = false);
  // `waited`: how long the peer was given (the timeout, or the connect timeout while the ring forms).
  [[noreturn]] void fail_silent(int peer, std::optional<std::chrono::milliseconds> waited = std::nullopt);
  [[noreturn]] void fail_closed(int peer);

  TcpCommunicatorOptions options_;
  std::vector<HostPort> peers_;
  DataPlaneClaims& server_;
  Socket to_right_;
  Socket from_left_;
  std::optional<SendRateLimiter> limiter_;
  std::vector<float> scratch_;  // reduce-scatter's partial sums
  std::uint64_t sequence_ = 0;
  std::optional<CollectiveError> broken_;
};

}  // namespace trainyard::neuron
