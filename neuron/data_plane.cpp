#include "neuron/data_plane.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace trainyard::neuron {
namespace {

constexpr std::array<std::byte, 4> kMagic{std::byte{'T'}, std::byte{'Y'}, std::byte{'D'}, std::byte{'P'}};
// 2: the server's nonce first, and a MAC after the hello.
// 3: the server acknowledges a whole hello with one byte, so a dialer knows it was not dropped first.
constexpr std::uint16_t kProtocolVersion = 3;
constexpr std::byte kHelloReceived{0x06};

// The peer's address without its port: what its connections are counted by.
std::string source_address(const sockaddr_storage& peer) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (peer.ss_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr, text, sizeof text);
  } else if (peer.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(peer).sin_addr, text, sizeof text);
  }
  return text;
}

bool proves_secret(std::string_view secret, const HelloNonce& nonce, std::span<const std::byte, kHelloBytes> hello,
                   const HelloMac& mac) {
  const HelloMac expected = hello_mac(secret, nonce, hello);
  return CRYPTO_memcmp(expected.data(), mac.data(), kMacBytes) == 0;
}

std::string describe(const DataPlaneHello& hello) {
  return fmt::format(" attempt_id={} from_rank={} to_rank={} channel={}", hello.attempt_id, hello.from_rank,
                     hello.to_rank, hello.channel);
}

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

HelloMac hello_mac(std::string_view secret, const HelloNonce& nonce, std::span<const std::byte, kHelloBytes> hello) {
  std::array<std::byte, kNonceBytes + kHelloBytes> message{};
  std::memcpy(message.data(), nonce.data(), kNonceBytes);
  std::memcpy(message.data() + kNonceBytes, hello.data(), kHelloBytes);
  HelloMac mac{};
  unsigned int length = 0;
  static const char kNoKey = 0;  // OpenSSL wants a key pointer even for an empty key
  if (!HMAC(EVP_sha256(), secret.empty() ? &kNoKey : secret.data(), static_cast<int>(secret.size()), reinterpret_cast<const unsigned char*>(message.data()),
            message.size(), reinterpret_cast<unsigned char*>(mac.data()), &length) ||
      length != kMacBytes) {
    throw std::runtime_error("HMAC-SHA256 failed");
  }
  return mac;
}

IoResult send_hello(const Socket& socket, const DataPlaneHello& hello, std::string_view secret, SteadyTime deadline) {
  HelloNonce nonce{};
  if (const IoResult r = read_all(socket, nonce, deadline); r != IoResult::done) return r;
  std::array<std::byte, kHelloBytes + kMacBytes> out{};
  const auto fields = encode_hello(hello);
  const HelloMac mac = hello_mac(secret, nonce, fields);
  std::memcpy(out.data(), fields.data(), kHelloBytes);
  std::memcpy(out.data() + kHelloBytes, mac.data(), kMacBytes);
  if (const IoResult r = write_all(socket, out, deadline); r != IoResult::done) return r;
  std::byte received{};
  if (const IoResult r = read_all(socket, std::span(&received, 1), deadline); r != IoResult::done) return r;
  return received == kHelloReceived ? IoResult::done : IoResult::closed;
}

DataPlaneServer::DataPlaneServer(const HostPort& address, Options options)
    : options_(options),
      listener_(listen_tcp(address)),
      port_(local_port(listener_)),
      pending_quota_(options.pending_caps),
      parked_quota_(options.parked_caps) {
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

std::optional<Socket> DataPlaneServer::claim(const DataPlaneHello& hello, std::string_view secret, SteadyTime deadline) {
  std::unique_lock lock(mutex_);
  waiting_[hello] = std::string(secret);
  struct NoLongerWaiting {
    std::map<DataPlaneHello, std::string>& waiting;
    const DataPlaneHello& hello;
    ~NoLongerWaiting() { waiting.erase(hello); }
  } no_longer_waiting{waiting_, hello};
  while (true) {
    arrived_.wait_until(lock, deadline, [&] { return stopping_ || parked_.contains(hello); });
    const auto it = parked_.find(hello);
    if (stopping_ || it == parked_.end()) return std::nullopt;
    std::vector<Parked> candidates = std::move(it->second);
    parked_.erase(it);
    // The newest that proves the secret wins (a rank's reconnect replaces its old connection);
    // the rest are closed.
    std::optional<Socket> chosen;
    const SteadyTime now = std::chrono::steady_clock::now();
    for (auto c = candidates.rbegin(); c != candidates.rend(); ++c) {
      const bool genuine = proves_secret(secret, c->nonce, c->hello, c->mac);
      if (genuine && !chosen) {
        parked_quota_.remove(c->id);
        chosen = std::move(c->socket);
      } else if (!genuine) {
        drop_parked(hello, *c, "bad_mac", now);
      } else {
        parked_quota_.remove(c->id);  // an older connection of the same rank: closed with `candidates`
      }
    }
    if (chosen) return chosen;
  }
}

void DataPlaneServer::drop_parked(const DataPlaneHello& hello, Parked& parked, std::string_view reason,
                                  SteadyTime now) {
  parked_quota_.remove(parked.id);
  note_rejection(parked.source, reason, describe(hello), now);
  parked.socket.close();
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
      if (!read_hello(it->second, now)) continue;
      pending_quota_.remove(it->first);
      pending_.erase(it);
    }
    if (fds[1].revents != 0) accept_new(now);
    expire(now);
  }
}

void DataPlaneServer::accept_new(SteadyTime now) {
  while (true) {
    sockaddr_storage peer{};
    socklen_t peer_length = sizeof peer;
    Socket socket(
        ::accept4(listener_.fd(), reinterpret_cast<sockaddr*>(&peer), &peer_length, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!socket.valid()) return;  // EAGAIN: drained; anything else is the peer's problem
    std::string source = source_address(peer);
    HelloNonce nonce{};
    if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), static_cast<int>(nonce.size())) != 1) {
      reject(socket, source, "no_random_nonce");
      continue;
    }
    // A fresh socket's send buffer is empty: the nonce goes out whole or the peer is gone.
    if (::send(socket.fd(), nonce.data(), nonce.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(nonce.size())) {
      reject(socket, source, "nonce_not_sent");
      continue;
    }
    make_pending_room(source, now);
    const int fd = socket.fd();
    pending_quota_.add(fd, source);
    pending_.emplace(fd, Pending{std::move(socket), std::move(source), nonce, {}, 0, now + options_.hello_timeout});
  }
}

void DataPlaneServer::make_pending_room(const std::string& source, SteadyTime now) {
  const std::optional<int> victim = pending_quota_.to_drop_for(source);
  if (!victim) return;
  const auto it = pending_.find(*victim);
  if (!read_hello(it->second, now)) reject(it->second.socket, it->second.source, "too_many_pending");
  pending_quota_.remove(*victim);
  pending_.erase(it);
}

bool DataPlaneServer::read_hello(Pending& pending, SteadyTime now) {
  const ssize_t n = ::recv(pending.socket.fd(), pending.received_bytes.data() + pending.received,
                           pending.received_bytes.size() - pending.received, 0);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return false;
  if (n <= 0) {
    reject(pending.socket, pending.source, "closed_before_hello");
    return true;
  }
  pending.received += static_cast<std::size_t>(n);
  // The hello is judged as soon as it is whole: garbage is closed without waiting for a MAC.
  const auto fields = std::span(pending.received_bytes).first<kHelloBytes>();
  if (pending.received < kHelloBytes) return false;
  const auto hello = decode_hello(fields);
  if (!hello) {
    reject(pending.socket, pending.source, "bad_hello");
    return true;
  }
  if (pending.received < pending.received_bytes.size()) return false;
  const int id = pending.socket.fd();
  Parked parked{std::move(pending.socket), id, pending.source, pending.nonce, {}, {}, now + options_.unclaimed_timeout};
  std::memcpy(parked.hello.data(), fields.data(), kHelloBytes);
  std::memcpy(parked.mac.data(), pending.received_bytes.data() + kHelloBytes, kMacBytes);
  std::lock_guard lock(mutex_);
  park(*hello, std::move(parked), now);
  return true;
}

void DataPlaneServer::park(const DataPlaneHello& hello, Parked parked, SteadyTime now) {
  if (const auto waiting = waiting_.find(hello);
      waiting != waiting_.end() && !proves_secret(waiting->second, parked.nonce, parked.hello, parked.mac)) {
    note_rejection(parked.source, "bad_mac", describe(hello), now);
    parked.socket.close();
    return;
  }
  if (const std::optional<int> victim = parked_quota_.to_drop_for(parked.source)) {
    for (auto it = parked_.begin(); it != parked_.end(); ++it) {
      auto& candidates = it->second;
      const auto found =
          std::find_if(candidates.begin(), candidates.end(), [&](const Parked& p) { return p.id == *victim; });
      if (found == candidates.end()) continue;
      drop_parked(it->first, *found, "too_many_parked", now);
      candidates.erase(found);
      if (candidates.empty()) parked_.erase(it);
      break;
    }
  }
  // A fresh socket's send buffer is empty: the byte goes out or the peer is gone, which its claimer finds.
  [[maybe_unused]] const ssize_t sent = ::send(parked.socket.fd(), &kHelloReceived, 1, MSG_NOSIGNAL);
  parked_quota_.add(parked.id, parked.source);
  parked_[hello].push_back(std::move(parked));
  arrived_.notify_all();
}

void DataPlaneServer::expire(SteadyTime now) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.deadline > now) {
      ++it;
      continue;
    }
    reject(it->second.socket, it->second.source, "hello_timeout");
    pending_quota_.remove(it->first);
    it = pending_.erase(it);
  }
  std::lock_guard lock(mutex_);
  for (auto it = parked_.begin(); it != parked_.end();) {
    auto& candidates = it->second;
    const auto expired =
        std::stable_partition(candidates.begin(), candidates.end(), [&](const Parked& p) { return p.deadline > now; });
    for (auto c = expired; c != candidates.end(); ++c) drop_parked(it->first, *c, "unclaimed", now);
    candidates.erase(expired, candidates.end());
    it = candidates.empty() ? parked_.erase(it) : std::next(it);
  }
}

SteadyTime DataPlaneServer::next_deadline() const {
  SteadyTime next = SteadyTime::max();
  for (const auto& [fd, pending] : pending_) next = std::min(next, pending.deadline);
  std::lock_guard lock(mutex_);
  for (const auto& [hello, candidates] : parked_) {
    for (const Parked& parked : candidates) next = std::min(next, parked.deadline);
  }
  return next;
}

void DataPlaneServer::reject(Socket& socket, const std::string& source, const char* reason) {
  {
    std::lock_guard lock(mutex_);
    // Counted before the close, so whoever sees the close also sees the count.
    note_rejection(source, reason, "", std::chrono::steady_clock::now());
  }
  socket.close();
}

void DataPlaneServer::note_rejection(const std::string& source, std::string_view reason, std::string_view detail,
                                     SteadyTime now) {
  ++rejected_;
  auto log = rejection_logs_.find(reason);
  if (log == rejection_logs_.end())
    log = rejection_logs_.emplace(std::string(reason), net::RateLimitedLog(options_.log_interval)).first;
  if (const std::optional<std::uint64_t> held_back = log->second.occurred(now)) {
    spdlog::warn("data_plane event=rejected port={} reason={} source={}{} suppressed={}", port_, reason, source, detail,
                 *held_back);
  }
}

}  // namespace trainyard::neuron
