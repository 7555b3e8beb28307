#include "agent/neuron/data_plane.h"

#include <fcntl.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

namespace trainyard::neuron {
namespace {

constexpr std::array<std::byte, 4> kMagic{std::byte{'T'}, std::byte{'Y'}, std::byte{'D'}, std::byte{'P'}};
constexpr std::uint16_t kProtocolVersion = 1;
// Bounds the fds a flood of half-open connections can pin; beyond it new ones are refused.
constexpr std::size_t kMaxPending = 256;

}  // namespace

std::array<std::byte, kHelloBytes> encode_hello(const DataPlaneHello& hello) {
  std::array<std::byte, kHelloBytes> out{};
  std::memcpy(out.data(), kMagic.data(), kMagic.size());
  put_big_endian<std::uint16_t>(out.data() + 4, kProtocolVersion);
  put_big_endian<std::uint16_t>(out.data() + 6, static_cast<std::uint16_t>(hello.channel));
  put_big_endian<std::int64_t>(out.data() + 8, hello.attempt_id);
  put_big_endian<std::int32_t>(out.data() + 16, hello.from_rank);
  put_big_endian<std::int32_t>(out.data() + 20, hello.to_rank);
  return out;
}

std::optional<DataPlaneHello> decode_hello(std::span<const std::byte, kHelloBytes> bytes) {
  if (std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0) return std::nullopt;
  if (get_big_endian<std::uint16_t>(bytes.data() + 4) != kProtocolVersion) return std::nullopt;
  DataPlaneHello hello;
  hello.channel = get_big_endian<std::uint16_t>(bytes.data() + 6);
  hello.attempt_id = get_big_endian<std::int64_t>(bytes.data() + 8);
  hello.from_rank = get_big_endian<std::int32_t>(bytes.data() + 16);
  hello.to_rank = get_big_endian<std::int32_t>(bytes.data() + 20);
  if (hello.from_rank < 0 || hello.to_rank < 0) return std::nullopt;
  return hello;
}

DataPlaneServer::DataPlaneServer(const HostPort& address, Options options)
    : options_(options), listener_(listen_tcp(address)), port_(local_port(listener_)) {
  set_non_blocking(listener_);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
  wake_read_ = Socket(fds[0]);
  wake_write_ = Socket(fds[1]);
  thread_ = std::thread([this] { run(); });
  spdlog::info("data_plane event=listening address={}", to_string(HostPort{address.host, port_}));
}

DataPlaneServer::~DataPlaneServer() { stop(); }

void DataPlaneServer::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  arrived_.notify_all();
  const char byte = 0;
  [[maybe_unused]] const ssize_t n = ::write(wake_write_.fd(), &byte, 1);
  thread_.join();
  listener_.close();  // also resets connections still waiting in the accept backlog
  pending_.clear();
  std::lock_guard lock(mutex_);
  parked_.clear();
}

std::optional<Socket> DataPlaneServer::claim(const DataPlaneHello& hello, SteadyTime deadline) {
  std::unique_lock lock(mutex_);
  arrived_.wait_until(lock, deadline, [&] { return stopping_ || parked_.contains(hello); });
  const auto it = parked_.find(hello);
  if (stopping_ || it == parked_.end()) return std::nullopt;
  Socket socket = std::move(it->second.socket);
  parked_.erase(it);
  return socket;
}

std::size_t DataPlaneServer::rejected_connections() const {
  std::lock_guard lock(mutex_);
  return rejected_;
}

void DataPlaneServer::run() {
  std::vector<pollfd> fds;
  while (true) {
    fds.clear();
    fds.push_back({wake_read_.fd(), POLLIN, 0});
    fds.push_back({listener_.fd(), POLLIN, 0});
    for (const auto& [fd, pending] : pending_) fds.push_back({fd, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), poll_timeout_ms(next_deadline()));
    if (ready < 0 && errno != EINTR) {
      spdlog::error("data_plane event=poll_failed port={} error={}", port_, std::strerror(errno));
      return;
    }
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    const SteadyTime now = std::chrono::steady_clock::now();
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      const auto it = pending_.find(fds[i].fd);
      if (read_hello(it->second, now)) pending_.erase(it);
    }
    if (fds[1].revents != 0) accept_new(now);
    expire(now);
  }
}

void DataPlaneServer::accept_new(SteadyTime now) {
  while (true) {
    Socket socket(::accept4(listener_.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!socket.valid()) return;  // EAGAIN: drained; anything else is the peer's problem
    if (pending_.size() >= kMaxPending) {
      reject(socket, "too_many_pending");
      continue;
    }
    const int fd = socket.fd();
    pending_.emplace(fd, Pending{std::move(socket), {}, 0, now + options_.hello_timeout});
  }
}

bool DataPlaneServer::read_hello(Pending& pending, SteadyTime now) {
  const ssize_t n = ::recv(pending.socket.fd(), pending.hello.data() + pending.received,
                           kHelloBytes - pending.received, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  if (n <= 0) {
    reject(pending.socket, "closed_before_hello");
    return true;
  }
  pending.received += static_cast<std::size_t>(n);
  if (pending.received < kHelloBytes) return false;
  const auto hello = decode_hello(pending.hello);
  if (!hello) {
    reject(pending.socket, "bad_hello");
    return true;
  }
  std::lock_guard lock(mutex_);
  // A second hello with the same key is a reconnect by the same rank; the newer one wins.
  parked_.insert_or_assign(*hello, Parked{std::move(pending.socket), now + options_.unclaimed_timeout});
  arrived_.notify_all();
  return true;
}

void DataPlaneServer::expire(SteadyTime now) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.deadline > now) {
      ++it;
      continue;
    }
    reject(it->second.socket, "hello_timeout");
    it = pending_.erase(it);
  }
  std::lock_guard lock(mutex_);
  for (auto it = parked_.begin(); it != parked_.end();) {
    if (it->second.deadline > now) {
      ++it;
      continue;
    }
    spdlog::warn("data_plane event=unclaimed attempt_id={} from_rank={} to_rank={} channel={}", it->first.attempt_id,
                 it->first.from_rank, it->first.to_rank, it->first.channel);
    ++rejected_;
    it = parked_.erase(it);
  }
}

SteadyTime DataPlaneServer::next_deadline() const {
  SteadyTime next = SteadyTime::max();
  for (const auto& [fd, pending] : pending_) next = std::min(next, pending.deadline);
  std::lock_guard lock(mutex_);
  for (const auto& [hello, parked] : parked_) next = std::min(next, parked.deadline);
  return next;
}

void DataPlaneServer::reject(Socket& socket, const char* reason) {
  spdlog::warn("data_plane event=rejected port={} reason={}", port_, reason);
  {
    std::lock_guard lock(mutex_);
    ++rejected_;  // counted before the close, so whoever sees the close also sees the count
  }
  socket.close();
}

}  // namespace trainyard::neuron
