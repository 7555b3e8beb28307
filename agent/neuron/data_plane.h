#pragma once
// The agent's data-plane port (DESIGN.md "Collectives"): one listening socket per agent process,
// through which the ranks of every attempt on this node receive their ring connections.
//
// Every connection opens with a fixed 24-byte hello naming the attempt, the sending and receiving
// rank and a channel. The server's thread accepts connections and reads hellos with a poll loop,
// so a slow or garbage-sending client never blocks anyone; a complete, valid hello parks the
// socket in a registry until the communicator of that attempt claims it. Hellos that are invalid,
// too slow, or never claimed are closed: a rank of a stale attempt cannot feed data into a new one.
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
#include <thread>
#include <tuple>

#include "agent/neuron/tcp_socket.h"

namespace trainyard::neuron {

struct DataPlaneHello {
  std::int64_t attempt_id = 0;  // proto AttemptId: fences connections of other attempts
  int from_rank = 0;
  int to_rank = 0;
  int channel = 0;  // lets several communicators of one attempt coexist (training, health tests)
  auto operator<=>(const DataPlaneHello&) const = default;
};

inline constexpr std::size_t kHelloBytes = 24;
inline constexpr int kMaxChannel = 0xffff;

std::array<std::byte, kHelloBytes> encode_hello(const DataPlaneHello& hello);
// nullopt unless the magic and protocol version match and the ranks are non-negative.
std::optional<DataPlaneHello> decode_hello(std::span<const std::byte, kHelloBytes> bytes);

class DataPlaneServer {
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

  // Waits for the connection whose hello equals `hello` and hands it over (non-blocking mode).
  // nullopt at `deadline` or once the server stops.
  std::optional<Socket> claim(const DataPlaneHello& hello, SteadyTime deadline);

  // Connections closed because their hello was malformed, late, or never claimed.
  std::size_t rejected_connections() const;

  void stop();

 private:
  struct Pending {
    Socket socket;
    std::array<std::byte, kHelloBytes> hello{};
    std::size_t received = 0;
    SteadyTime deadline;
  };
  struct Parked {
    Socket socket;
    SteadyTime deadline;
  };

  void run();
  void accept_new(SteadyTime now);
  // Reads what a pending connection has sent; true when it is finished with (parked or closed).
  bool read_hello(Pending& pending, SteadyTime now);
  void expire(SteadyTime now);
  SteadyTime next_deadline() const;
  void reject(Socket& socket, const char* reason);

  Options options_;
  Socket listener_;
  std::uint16_t port_ = 0;
  Socket wake_read_;  // a self-pipe: `stop` writes to it to interrupt poll(2)
  Socket wake_write_;
  std::map<int, Pending> pending_;  // by fd; touched only by the server thread

  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<DataPlaneHello, Parked> parked_;
  std::size_t rejected_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace trainyard::neuron
