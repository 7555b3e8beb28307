#pragma once
// The agent's data-plane port (docs/DESIGN.md "Collectives and the data plane"): one listening socket per
// agent process, through which the ranks of every attempt on this node receive their ring connections.
//
// Every connection is authenticated before it can join a ring: on accept the server sends a fresh
// 16-byte nonce; the dialer answers with a fixed 24-byte hello naming the attempt, the sending and
// receiving rank and a channel, followed by HMAC-SHA256(secret, nonce || hello), where the secret
// is the attempt's (the daemon sends it to the attempt's ranks only, in their launch messages; a
// health check's collective session has its own). The secret never crosses the data plane, and a
// recorded hello is useless on another connection (another nonce). The server answers a whole
// hello with one byte, so a dialer whose connection was dropped before that dials again. The
// server's thread accepts connections and reads hellos with a poll loop, so a slow or
// garbage-sending client never blocks anyone; a complete hello parks the socket until the
// communicator of that attempt claims it with the secret: a connection whose MAC does not verify
// is closed and logged, never handed over.
// Hellos that are invalid, too slow, or never claimed are closed: a rank of a stale attempt, or a
// stranger without the secret, cannot feed data into an attempt's ring. A claimer already waiting
// checks the MAC of its hello on arrival, so a stranger's copy is closed at once and cannot push
// the genuine connection out.
//
// A job on a shared node can reach this port too. What it can hold is bounded (connection_quota.h):
// connections that have not said hello, and hellos waiting for their claimer, each per source
// address and in total; a new connection always gets in, and the oldest of the flooding source
// makes room. Rejections are logged at most once per `log_interval` per reason, with the count held
// back, and counted (`rejected_connections`): a health check that failed while some were rejected
// was interfered with, which says nothing about the node (healthcheck/verdict.h).
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
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "net/accept_policy.h"
#include "neuron/connection_quota.h"
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
// the hello and its MAC under `secret`, and waits for the server's byte saying it has them: `closed`
// when the server dropped the connection first (a flooded port makes room that way), to dial again.
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
    std::chrono::milliseconds hello_timeout{2000};       // a new connection must say hello by then
    std::chrono::milliseconds unclaimed_timeout{60000};  // a hello nobody claims is closed after
    ConnectionCaps pending_caps{256, 64};                // connections that have not said hello
    ConnectionCaps parked_caps{256, 64};                 // hellos waiting for their claimer
    std::chrono::milliseconds log_interval{5000};        // at most one line per rejection reason
  };

  // Binds `address` (port 0 picks a free one) and starts the server thread. Throws on bind failure.
  DataPlaneServer(const HostPort& address, Options options);
  ~DataPlaneServer();
  DataPlaneServer(const DataPlaneServer&) = delete;
  DataPlaneServer& operator=(const DataPlaneServer&) = delete;

  std::uint16_t port() const { return port_; }

  // Connections with the claimed hello whose MAC does not verify are closed.
  std::optional<Socket> claim(const DataPlaneHello& hello, std::string_view secret, SteadyTime deadline) override;

  // Connections closed because their hello was malformed, late, unauthenticated or never claimed,
  // or to make room under the caps.
  std::size_t rejected_connections() const;

  void stop();

 private:
  struct Pending {
    Socket socket;
    std::string source;  // the peer's address, without its port
    HelloNonce nonce{};
    std::array<std::byte, kHelloBytes + kMacBytes> received_bytes{};  // the hello, then its MAC
    std::size_t received = 0;
    SteadyTime deadline;
  };
  // A connection that said hello, waiting for its claimer to check its MAC.
  struct Parked {
    Socket socket;
    int id = 0;  // its descriptor when parked, its key in parked_quota_
    std::string source;
    HelloNonce nonce{};
    std::array<std::byte, kHelloBytes> hello{};
    HelloMac mac{};
    SteadyTime deadline;
  };

  void run();
  void accept_new(SteadyTime now);
  // Makes room among the pending connections for one more from `source`: the one to drop is read
  // first, since its hello may have arrived since the last poll.
  void make_pending_room(const std::string& source, SteadyTime now);
  // Reads what a pending connection has sent; true when it is finished with (parked or closed).
  bool read_hello(Pending& pending, SteadyTime now);
  // Under mutex_: parks a connection whose hello arrived, or closes it when its waiting claimer
  // finds its MAC wrong.
  void park(const DataPlaneHello& hello, Parked parked, SteadyTime now);
  void expire(SteadyTime now);
  SteadyTime next_deadline() const;
  void reject(Socket& socket, const std::string& source, const char* reason);
  // Under mutex_: counts a rejection and logs it unless its reason logged within log_interval.
  void note_rejection(const std::string& source, std::string_view reason, std::string_view detail, SteadyTime now);
  // Under mutex_: closes a parked connection for `reason` and forgets it.
  void drop_parked(const DataPlaneHello& hello, Parked& parked, std::string_view reason, SteadyTime now);

  Options options_;
  Socket listener_;
  std::uint16_t port_ = 0;
  Socket wake_read_;  // a self-pipe: `stop` writes to it to interrupt poll(2)
  Socket wake_write_;
  std::map<int, Pending> pending_;  // by fd; with pending_quota_, touched only by the server thread
  ConnectionQuota pending_quota_;

  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  // Oldest first. More than one when a rank reconnects, or when someone without the secret
  // claims to be it: the claimer tells them apart by the MAC.
  std::map<DataPlaneHello, std::vector<Parked>> parked_;
  ConnectionQuota parked_quota_;
  std::map<DataPlaneHello, std::string> waiting_;  // the secret of each hello a claimer waits for
  std::map<std::string, net::RateLimitedLog, std::less<>> rejection_logs_;  // by reason
  std::size_t rejected_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace trainyard::neuron
