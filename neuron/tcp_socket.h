#pragma once
// Thin blocking/non-blocking POSIX TCP helpers for the data plane (docs/DESIGN.md "Collectives and the data plane").
// The data plane deliberately avoids Asio: the training thread calls collectives synchronously,
// and a poll loop over two sockets is all a ring step needs.
//
// Deadlines use the steady clock: they bound waits on the network, they are not policy.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

namespace trainyard::neuron {

using SteadyTime = std::chrono::steady_clock::time_point;

// Owns one file descriptor; closes it on destruction. Move-only.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { close(); }

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void close();

 private:
  int fd_ = -1;
};

struct HostPort {
  std::string host;  // numeric address or resolvable name; IPv6 without brackets
  std::uint16_t port = 0;
  bool operator==(const HostPort&) const = default;
};

// "host:port" or "[v6]:port". Untrusted (it arrives in a launch message or a flag): throws
// trainyard::InvalidInput naming `field` when malformed.
HostPort parse_host_port(const std::string& text, const std::string& field);
std::string to_string(const HostPort& address);

// A listening socket bound to `address` (port 0 picks a free port). Throws std::system_error.
Socket listen_tcp(const HostPort& address);
std::uint16_t local_port(const Socket& socket);

// Connects, retrying while the peer is not listening yet (it may still be starting), until
// `deadline`. nullopt when no connection could be made in time.
std::optional<Socket> connect_tcp(const HostPort& address, SteadyTime deadline);

// Settings for bulk transfer: no Nagle delay, non-blocking.
void tune_for_bulk_transfer(const Socket& socket);
void set_non_blocking(const Socket& socket);

enum class IoResult { done, timed_out, closed };

// Whole small messages (hellos, headers) on a non-blocking socket, bounded by `deadline`.
// `closed` covers an orderly close and any socket error.
IoResult write_all(const Socket& socket, std::span<const std::byte> bytes, SteadyTime deadline);
IoResult read_all(const Socket& socket, std::span<std::byte> bytes, SteadyTime deadline);

// Fixed-width integers on the wire are big-endian.
template <typename T>
void put_big_endian(std::byte* out, T value) {
  using U = std::make_unsigned_t<T>;
  auto bits = static_cast<U>(value);
  for (std::size_t i = sizeof(T); i-- > 0;) {
    out[i] = static_cast<std::byte>(bits & 0xff);
    bits = static_cast<U>(bits >> 8);
  }
}

template <typename T>
T get_big_endian(const std::byte* in) {
  using U = std::make_unsigned_t<T>;
  U bits = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) bits = static_cast<U>((bits << 8) | std::to_integer<U>(in[i]));
  return static_cast<T>(bits);
}

// Milliseconds from now to `deadline` for poll(2), clamped to [0, INT_MAX].
int poll_timeout_ms(SteadyTime deadline);

}  // namespace trainyard::neuron
