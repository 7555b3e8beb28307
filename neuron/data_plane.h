#pragma once
// The agent's data-plane port (docs/DESIGN.md "Collectives and the data plane"): one listening socket per
// agent process, through which the ranks of every attempt on this node receive their ring connections.
//
// Every connection is authenticated before it can join a ring: on accept the server sends a fresh
// 16-byte nonce; the dialer answers with a fixed 24-byte hello naming the attempt, the sending and
// receiving rank and a channel, followed by HMAC-SHA256(secret, nonce || hello), where the secret
// is the attempt's (the daemon sends it to the attempt's ranks only, in their launch messages; a
// health check's collective session has its own). The secret never crosses the data plane, and a
// recorded hello is useless on another connection (another nonce). The server's thread accepts
// connections and reads hellos with a poll loop, so a slow or garbage-sending client never blocks
// anyone; a complete hello parks the socket until the communicator of that attempt claims it with
// the secret: a connection whose MAC does not verify is closed and logged, never handed over.
// Hellos that are invalid, too slow, or never claimed are closed: a rank of a stale attempt, or a
// stranger without the secret, cannot feed data into an attempt's ring.
//
// Threading contract: `claim` may be called from any number of threads; `stop` (also run by the
// destructor) joins the server thread and closes every socket it still holds.
#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "neuron/tcp_socket.h"

namespace trainyard::neuron {

struct DataPlaneHello {
  std::int64_t attempt_id = 0;  // proto AttemptId: fences connections of other attempts
  int from_rank = 0;
  int to_rank = 0;
  int channel = 0;  // lets several communicators of one attempt coexist (training, health tests)
  auto operator<=>(const DataPlaneHello&) const = default;
};

inline constexpr std::size_t kHelloBytes = 24;
inline constexpr std::size_t kNonceBytes = 16;
inline constexpr std::size_t kMacBytes = 32;
inline constexpr int kMaxChannel = 0xffff;

using HelloNonce = std::array<std::byte, kNonceBytes>;
using HelloMac = std::array<std::byte, kMacBytes>;

std::array<std::byte, kHelloBytes> encode_hello(const DataPlaneHello& hello);
// nullopt unless the magic and protocol version match and the ranks are non-negative.
std::optional<DataPlaneHello> decode_hello(std::span<const std::byte, kHelloBytes> bytes);
// HMAC-SHA256(secret, nonce || hello).
HelloMac hello_mac(std::string_view secret, const HelloNonce& nonce, std::span<const std::byte, kHelloBytes> hello);

// The dialer's half of the handshake on a connected socket: reads the server's nonce, then sends
// the hello and its MAC under `secret`.
IoResult send_hello(const Socket& socket, const DataPlaneHello& hello, std::string_view secret, SteadyTime deadline);

// Where a ring's incoming connections are claimed: the agent's server itself, or, in a simulated
// rank's own process, a proxy that asks the agent's server over a channel (agent/rank_channel.h).
class DataPlaneClaims {
 public:
  virtual ~DataPlaneClaims() = default;
  // Waits for a connection whose hello equals `hello` and whose MAC verifies under `secret`, and
  // hands it over (non-blocking mode). nullopt at `deadline` or once the source stops.
  virtual std::optional<Socket> claim(const DataPlaneHello& hello, std::string_view secret, SteadyTime deadline) = 0;
};

class DataPlaneServer final : public DataPlaneClaims {
 public:
  struct Options {
    std::chrono::milliseconds hello_timeout{5000};       // a new connection must say hello by then
    std::chrono::milliseconds unclaimed_timeout{60000};  // a hello nobody claims is closed after
  };

  // Binds `address` (port 0 picks a free one) and starts the server thread. Throws on bind failure.
  DataPlaneServer(const HostPort& address, Options options);
  ~DataPlaneServer();
  DataPlaneServer(const DataPlaneServer&) = delete;
  DataPlaneServer& operator=(const DataPlaneServer&) = delete;

  std::uint16_t port() const { return port_; }

  // Connections with the claimed hello whose MAC does not verify are closed.
  std::optional<Socket> claim(const DataPlaneHello& hello, std::string_view secret, SteadyTime deadline) override;

  // Connections closed because their hello was malformed, late, unauthenticated or never claimed.
  std::size_t rejected_connections() const;

  void stop();

 private:
  struct Pending {
    Socket socket;
    HelloNonce nonce{};
    std::array<std::byte, kHelloBytes + kMacBytes> received_bytes{};  // the hello, then its MAC
    std::size_t received = 0;
    SteadyTime deadline;
  };
  // A connection that said hello, waiting for its claimer to check its MAC.
  struct Parked {
    Socket socket;
    HelloNonce nonce{};
    std::array<std::byte, kHelloBytes> hello{};
    HelloMac mac{};
    SteadyTime deadline;
  };

  void run();
  void accept_new(SteadyTime now);
  // Reads what a pending connection has sent; true when it is finished with (parked or closed).
  bool read_hello(Pending& pending, SteadyTime now);
  void expire(SteadyTime now);
  SteadyTime next_deadline() const;
  void reject(Socket& socket, const char* reason);
  // Under mutex_: counts and closes a parked connection that failed its claimer's MAC check.
  void reject_unauthenticated(const DataPlaneHello& hello, Parked& parked);

  Options options_;
  Socket listener_;
  std::uint16_t port_ = 0;
  Socket wake_read_;  // a self-pipe: `stop` writes to it to interrupt poll(2)
  Socket wake_write_;
  std::map<int, Pending> pending_;  // by fd; touched only by the server thread

  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  // Oldest first. More than one when a rank reconnects, or when someone without the secret
  // claims to be it: the claimer tells them apart by the MAC.
  std::map<DataPlaneHello, std::vector<Parked>> parked_;
  std::size_t rejected_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace trainyard::neuron
