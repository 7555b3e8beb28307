#pragma once
// A raw client connection to the daemon, for the hostile-client tests that send what no client
// library would: partial headers, repeated fields, bad framing, connections that say nothing.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <string>
#include <utility>

namespace trainyard::testing {

// The descriptors process `pid` holds open: a daemon's connections, among others.
inline std::size_t open_descriptors(pid_t pid) {
  const auto dir = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd");
  return static_cast<std::size_t>(std::distance(std::filesystem::begin(dir), std::filesystem::end(dir)));
}

// A raw client connection to the daemon, closed when it goes.
class RawConnection {
 public:
  explicit RawConnection(const std::string& url) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(std::stoi(url.substr(url.rfind(':') + 1))));
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    connected_ = ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  // The descriptor, now the caller's to close.
  int release() { return std::exchange(fd_, -1); }
  bool send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }
  // Sends GET /healthz and reads until the status line is in, the server closes, or `timeout`.
  std::string get_healthz(std::chrono::milliseconds timeout) {
    return send("GET /healthz HTTP/1.1\r\nHost: daemon\r\n\r\n") ? read_until("\r\n", timeout) : "";
  }
  // Reads until `end` is in what came, the server closes, or `timeout`.
  std::string read_until(const std::string& end, std::chrono::milliseconds timeout) {
    std::string in;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (in.find(end) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[512];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      in.append(buf, static_cast<std::size_t>(n));
    }
    return in;
  }
  // Whether the server closed (or reset) the connection within `timeout` without sending anything.
  bool closed_by_server(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
    char c = 0;
    return ::recv(fd_, &c, 1, 0) <= 0;
  }

 private:
  int fd_;
  bool connected_ = false;
};

}  // namespace trainyard::testing
