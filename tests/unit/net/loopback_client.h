#pragma once
// A client socket for the HTTP server's tests on loopback, read without blocking so the test's
// thread can run the server's io_context between reads. connect() to loopback completes in the
// kernel, before the server accepts.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>

namespace trainyard::net::testing {

struct LoopbackClient {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int connect_errno = 0;
  std::string received;
  bool closed = false;

  explicit LoopbackClient(unsigned short port) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) connect_errno = errno;
  }
  ~LoopbackClient() { ::close(fd); }
  LoopbackClient(const LoopbackClient&) = delete;
  LoopbackClient& operator=(const LoopbackClient&) = delete;

  bool send(const std::string& text) const {
    return ::send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
  }
  // Reads what has arrived without blocking; notes the server's close.
  void poll() {
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0) {
        received.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) closed = true;
      return;
    }
  }
  // The HTTP/1.1 answers received so far.
  std::size_t answers() const {
    std::size_t count = 0;
    for (auto at = received.find("HTTP/1.1 "); at != std::string::npos; at = received.find("HTTP/1.1 ", at + 1)) ++count;
    return count;
  }
};

}  // namespace trainyard::net::testing
