#include "neuron/tcp_socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <memory>
#include <system_error>
#include <thread>

#include "proto/errors.h"

namespace trainyard::neuron {
namespace {

// How long to wait before retrying a refused connect: the peer agent may be a moment late.
constexpr auto kConnectRetry = std::chrono::milliseconds(20);

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

struct AddrInfoDeleter {
  void operator()(addrinfo* info) const { freeaddrinfo(info); }
};
using AddrInfoPtr = std::unique_ptr<addrinfo, AddrInfoDeleter>;

AddrInfoPtr resolve(const HostPort& address, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* result = nullptr;
  const std::string port = std::to_string(address.port);
  const int rc = getaddrinfo(address.host.empty() ? nullptr : address.host.c_str(), port.c_str(), &hints, &result);
  if (rc != 0) {
    throw std::runtime_error("cannot resolve " + to_string(address) + ": " + gai_strerror(rc));
  }
  return AddrInfoPtr(result);
}

}  // namespace

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void Socket::close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

HostPort parse_host_port(const std::string& text, const std::string& field) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw InvalidInput(field, "expected host:port, got \"" + text + "\"");
  }
  std::string host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') {
      throw InvalidInput(field, "unbalanced brackets in \"" + text + "\"");
    }
    host = host.substr(1, host.size() - 2);
  }
  unsigned port = 0;
  const char* first = text.data() + colon + 1;
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(first, last, port);
  if (ec != std::errc() || end != last || port == 0 || port > 65535) {
    throw InvalidInput(field, "port must be 1..65535 in \"" + text + "\"");
  }
  return HostPort{std::move(host), static_cast<std::uint16_t>(port)};
}

std::string to_string(const HostPort& address) {
  const bool v6 = address.host.find(':') != std::string::npos;
  return (v6 ? "[" + address.host + "]" : address.host) + ":" + std::to_string(address.port);
}

Socket listen_tcp(const HostPort& address) {
  const AddrInfoPtr info = resolve(address, true);
  Socket socket(::socket(info->ai_family, info->ai_socktype | SOCK_CLOEXEC, info->ai_protocol));
  if (!socket.valid()) throw_errno("socket");
  const int one = 1;
  ::setsockopt(socket.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(socket.fd(), info->ai_addr, info->ai_addrlen) != 0) throw_errno("bind " + to_string(address));
  if (::listen(socket.fd(), SOMAXCONN) != 0) throw_errno("listen " + to_string(address));
  return socket;
}

std::uint16_t local_port(const Socket& socket) {
  sockaddr_storage storage{};
  socklen_t length = sizeof storage;
  if (::getsockname(socket.fd(), reinterpret_cast<sockaddr*>(&storage), &length) != 0) throw_errno("getsockname");
  if (storage.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(storage).sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in&>(storage).sin_port);
}

std::optional<Socket> connect_tcp(const HostPort& address, SteadyTime deadline) {
  const AddrInfoPtr info = resolve(address, false);
  while (true) {
    Socket socket(::socket(info->ai_family, info->ai_socktype | SOCK_CLOEXEC, info->ai_protocol));
    if (!socket.valid()) throw_errno("socket");
    set_non_blocking(socket);
    int rc = ::connect(socket.fd(), info->ai_addr, info->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd waiter{socket.fd(), POLLOUT, 0};
      if (::poll(&waiter, 1, poll_timeout_ms(deadline)) <= 0) return std::nullopt;
      int error = 0;
      socklen_t length = sizeof error;
      ::getsockopt(socket.fd(), SOL_SOCKET, SO_ERROR, &error, &length);
      rc = error == 0 ? 0 : -1;
    }
    if (rc == 0) return socket;
    if (std::chrono::steady_clock::now() + kConnectRetry >= deadline) return std::nullopt;
    std::this_thread::sleep_for(kConnectRetry);
  }
}

void set_non_blocking(const Socket& socket) {
  const int flags = ::fcntl(socket.fd(), F_GETFL, 0);
  if (flags < 0 || ::fcntl(socket.fd(), F_SETFL, flags | O_NONBLOCK) != 0) throw_errno("fcntl O_NONBLOCK");
}

void tune_for_bulk_transfer(const Socket& socket) {
  // Buffer sizes are left to the kernel on purpose: setting SO_SNDBUF/SO_RCVBUF turns off TCP
  // auto-tuning, whose ceiling (net.ipv4.tcp_rmem, 32 MiB here) is above what setsockopt may set
  // (net.core.rmem_max), and measured at least as fast on loopback.
  const int one = 1;
  ::setsockopt(socket.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  set_non_blocking(socket);
}

IoResult write_all(const Socket& socket, std::span<const std::byte> bytes, SteadyTime deadline) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(socket.fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes = bytes.subspan(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return IoResult::closed;
    pollfd waiter{socket.fd(), POLLOUT, 0};
    if (::poll(&waiter, 1, poll_timeout_ms(deadline)) == 0) return IoResult::timed_out;
  }
  return IoResult::done;
}

IoResult read_all(const Socket& socket, std::span<std::byte> bytes, SteadyTime deadline) {
  while (!bytes.empty()) {
    const ssize_t n = ::recv(socket.fd(), bytes.data(), bytes.size(), 0);
    if (n > 0) {
      bytes = bytes.subspan(static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return IoResult::closed;
    pollfd waiter{socket.fd(), POLLIN, 0};
    if (::poll(&waiter, 1, poll_timeout_ms(deadline)) == 0) return IoResult::timed_out;
  }
  return IoResult::done;
}

int poll_timeout_ms(SteadyTime deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return 0;
  return left.count() > INT_MAX ? INT_MAX : static_cast<int>(left.count());
}

}  // namespace trainyard::neuron
