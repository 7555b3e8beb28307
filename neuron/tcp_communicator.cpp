#include "neuron/tcp_communicator.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "proto/errors.h"

namespace trainyard::neuron {
namespace {

// Largest piece handed to one send/recv call: big enough that syscall overhead vanishes, small
// enough that sending and receiving take turns often and both pipes stay full.
constexpr std::size_t kMaxIoBytes = 1 << 20;
// Received bytes of a reducing step land here before being added to the local chunk.
constexpr std::size_t kStagingFloats = kMaxIoBytes / sizeof(float);

constexpr std::size_t kHeaderBytes = 24;
// Between dials of a right neighbour whose port dropped the connection before its hello.
constexpr std::chrono::milliseconds kRedialPause{5};

std::array<std::byte, kHeaderBytes> encode_header(CollectiveKind kind, std::uint64_t sequence, std::size_t elements) {
  std::array<std::byte, kHeaderBytes> out{};
  put_big_endian<std::uint64_t>(out.data(), static_cast<std::uint64_t>(kind));
  put_big_endian<std::uint64_t>(out.data() + 8, sequence);
  put_big_endian<std::uint64_t>(out.data() + 16, elements);
  return out;
}

std::string describe_header(std::span<const std::byte, kHeaderBytes> header) {
  const auto kind = get_big_endian<std::uint64_t>(header.data());
  const std::string name = kind <= static_cast<std::uint64_t>(CollectiveKind::reduce_scatter)
                               ? std::string(to_string(static_cast<CollectiveKind>(kind)))
                               : "operation " + std::to_string(kind);
  return name + " #" + std::to_string(get_big_endian<std::uint64_t>(header.data() + 8)) + " of " +
         std::to_string(get_big_endian<std::uint64_t>(header.data() + 16)) + " elements";
}

std::size_t byte_size(ElementRange range) { return range.count * sizeof(float); }

// memmove, because callers may pass their chunk of a buffer as both source and destination; and
// no call at all for empty chunks, whose data() may be null.
void copy_floats(float* to, const float* from, std::size_t count) {
  if (count > 0) std::memmove(to, from, count * sizeof(float));
}

bool would_block() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

}  // namespace

TcpCommunicator::TcpCommunicator(TcpCommunicatorOptions options, DataPlaneClaims& server)
    : options_(std::move(options)), server_(server) {
  if (options_.peers.empty()) throw InvalidInput("peers", "must name at least one rank");
  for (std::size_t i = 0; i < options_.peers.size(); ++i) {
    peers_.push_back(parse_host_port(options_.peers[i], "peers[" + std::to_string(i) + "]"));
  }
  if (options_.rank < 0 || options_.rank >= world_size()) {
    throw InvalidInput("rank", "must be 0.." + std::to_string(world_size() - 1));
  }
  if (options_.timeout.count() <= 0) throw InvalidInput("timeout", "must be positive");
  if (options_.channel < 0 || options_.channel > kMaxChannel) throw InvalidInput("channel", "must be 0..65535");
  if (const auto rate = options_.link.throttle_bytes_per_s) {
    if (!(*rate > 0)) throw InvalidInput("link.throttle", "must be a positive rate");
    limiter_.emplace(*rate, std::chrono::steady_clock::now());
  }
}

int TcpCommunicator::left() const { return (options_.rank + world_size() - 1) % world_size(); }
int TcpCommunicator::right() const { return (options_.rank + 1) % world_size(); }

std::string TcpCommunicator::describe(int peer) const {
  return "rank " + std::to_string(peer) + " (" + to_string(peers_[static_cast<std::size_t>(peer)]) + ")";
}

void TcpCommunicator::all_reduce_sum(std::span<float> data) {
  if (world_size() == 1) return;
  run(CollectiveKind::all_reduce, data, ring_all_reduce_steps(data.size(), world_size(), rank()));
}

void TcpCommunicator::all_gather(std::span<const float> mine, std::span<float> all) {
  const ElementRange own = chunk_of(all.size(), world_size(), rank());
  if (mine.size() != own.count) throw std::invalid_argument("all_gather: `mine` is not this rank's chunk of `all`");
  copy_floats(all.data() + own.begin, mine.data(), own.count);
  if (world_size() == 1) return;
  run(CollectiveKind::all_gather, all, ring_all_gather_steps(all.size(), world_size(), rank()));
}

void TcpCommunicator::reduce_scatter_sum(std::span<const float> input, std::span<float> mine) {
  const ElementRange own = chunk_of(input.size(), world_size(), rank());
  if (mine.size() != own.count) throw std::invalid_argument("reduce_scatter_sum: `mine` is not this rank's chunk");
  if (world_size() == 1) {
    copy_floats(mine.data(), input.data(), own.count);
    return;
  }
  // Partial sums go to `scratch_`, kept between calls: a fresh buffer per call would cost a page
  // fault per 4 KiB, which measured slower than the transfer itself.
  if (scratch_.size() < input.size()) scratch_.resize(input.size());
  const std::span<float> sums(scratch_.data(), input.size());
  run(CollectiveKind::reduce_scatter, sums, ring_reduce_scatter_steps(input.size(), world_size(), rank()), input);
  copy_floats(mine.data(), sums.data() + own.begin, own.count);
}

void TcpCommunicator::run(CollectiveKind kind, std::span<float> data, const std::vector<RingStep>& steps,
                          std::span<const float> source) {
  if (broken_) {
    throw CollectiveError(broken_->peer_rank(), std::string("communicator failed earlier: ") + broken_->what(),
                          broken_->peer_closed());
  }
  if (!to_right_.valid()) connect();
  if (options_.link.drop) fail(right(), "link to " + describe(right()) + " dropped (fault injection)");
  exchange_header(kind, data.size());
  transfer(data, source.empty() ? data : source, steps);
  ++sequence_;
}

void TcpCommunicator::connect() {
  const std::chrono::milliseconds waited = options_.connect_timeout.value_or(options_.timeout);
  const SteadyTime deadline = std::chrono::steady_clock::now() + waited;
  const DataPlaneHello hello{options_.attempt_id, rank(), right(), options_.channel};
  std::optional<Socket> outgoing;
  // A port flooded by connections that never say hello drops its oldest ones to let new ones in
  // (data_plane.h): a connection closed before its hello went out is dialled again until the deadline.
  for (IoResult said = IoResult::closed; said == IoResult::closed;) {
    try {
      outgoing = connect_tcp(peers_[static_cast<std::size_t>(right())], deadline);
    } catch (const std::exception& e) {  // an unresolvable name, or no sockets left
      fail(right(), "cannot reach " + describe(right()) + ": " + e.what());
    }
    if (!outgoing) fail_silent(right(), waited);
    said = send_hello(*outgoing, hello, options_.secret, deadline);
    if (said == IoResult::timed_out) fail_silent(right(), waited);
    if (said == IoResult::closed) std::this_thread::sleep_for(kRedialPause);  // not a spin on a port that keeps closing
  }
  to_right_ = std::move(*outgoing);
  std::optional<Socket> incoming =
      server_.claim({options_.attempt_id, left(), rank(), options_.channel}, options_.secret, deadline);
  if (!incoming) fail_silent(left(), waited);
  from_left_ = std::move(*incoming);
  tune_for_bulk_transfer(to_right_);
  tune_for_bulk_transfer(from_left_);
  spdlog::debug("collective event=connected attempt_id={} rank={} left={} right={}", options_.attempt_id, rank(),
                describe(left()), describe(right()));
}

void TcpCommunicator::exchange_header(CollectiveKind kind, std::size_t elements) {
  const SteadyTime deadline = std::chrono::steady_clock::now() + options_.timeout;
  const auto mine = encode_header(kind, sequence_, elements);
  switch (write_all(to_right_, mine, deadline)) {
    case IoResult::done: break;
    case IoResult::timed_out: fail_silent(right());
    case IoResult::closed: fail_closed(right());
  }
  std::array<std::byte, kHeaderBytes> theirs{};
  switch (read_all(from_left_, theirs, deadline)) {
    case IoResult::done: break;
    case IoResult::timed_out: fail_silent(left());
    case IoResult::closed: fail_closed(left());
  }
  if (theirs != mine) {
    fail(left(), describe(left()) + " is in a different collective: expected " + describe_header(mine) + ", got " +
                     describe_header(theirs));
  }
}

// One poll loop drives both directions. The receive side always drains its socket (reducing or
// copying into `data`), so no rank ever waits on its right neighbour to make room; the send side
// may send step t's bytes only as far as step t-1 has received them (see tcp_ring_plan.h).
// A reducing receive stores source + received into `data`; the first step sends from `source`.
void TcpCommunicator::transfer(std::span<float> data, std::span<const float> source,
                               const std::vector<RingStep>& steps) {
  std::byte* const base = reinterpret_cast<std::byte*>(data.data());
  const std::byte* const source_base = reinterpret_cast<const std::byte*>(source.data());
  const std::size_t step_count = steps.size();
  std::size_t send_step = 0;
  std::size_t sent = 0;  // bytes of `send_step` already sent
  std::size_t recv_step = 0;
  std::size_t received = 0;  // bytes of `recv_step` in place (reduced, for a reducing step)
  std::size_t staged = 0;    // bytes in `staging` not yet reduced (less than one float)
  const bool reduces = std::any_of(steps.begin(), steps.end(), [](const RingStep& s) { return s.reduce; });
  std::vector<float> staging(reduces ? kStagingFloats : 0);
  auto* const staging_bytes = reinterpret_cast<std::byte*>(staging.data());

  const auto skip_finished_steps = [&] {
    while (send_step < step_count && sent == byte_size(steps[send_step].send)) {
      ++send_step;
      sent = 0;
    }
    while (recv_step < step_count && received == byte_size(steps[recv_step].recv)) {
      ++recv_step;
      received = 0;
    }
  };
  const auto sendable_bytes = [&]() -> std::size_t {
    const std::size_t whole = byte_size(steps[send_step].send);
    if (send_step == 0 || recv_step >= send_step) return whole;
    return recv_step + 1 == send_step ? received : 0;
  };
  const auto try_receive = [&]() -> bool {
    const RingStep& step = steps[recv_step];
    const std::size_t missing = byte_size(step.recv) - received;
    std::byte* target = step.reduce ? staging_bytes + staged : base + step.recv.begin * sizeof(float) + received;
    const std::size_t room = step.reduce ? std::min(missing - staged, staging.size() * sizeof(float) - staged)
                                         : std::min(missing, kMaxIoBytes);
    const ssize_t n = ::recv(from_left_.fd(), target, room, 0);
    if (n < 0 && would_block()) return false;
    if (n <= 0) fail_closed(left());
    if (!step.reduce) {
      received += static_cast<std::size_t>(n);
      return true;
    }
    staged += static_cast<std::size_t>(n);
    const std::size_t whole = staged / sizeof(float);
    const std::size_t offset = step.recv.begin + received / sizeof(float);
    float* into = data.data() + offset;
    const float* mine = source.data() + offset;
    for (std::size_t i = 0; i < whole; ++i) into[i] = mine[i] + staging[i];
    received += whole * sizeof(float);
    staged -= whole * sizeof(float);
    std::memmove(staging_bytes, staging_bytes + whole * sizeof(float), staged);
    return true;
  };
  const auto try_send = [&](SteadyTime now) -> bool {
    const RingStep& step = steps[send_step];
    std::size_t amount = std::min(sendable_bytes() - sent, kMaxIoBytes);
    if (limiter_) amount = std::min(amount, limiter_->allowance(now));
    if (amount == 0) return false;
    const std::byte* from = (send_step == 0 ? source_base : base) + step.send.begin * sizeof(float) + sent;
    const ssize_t n = ::send(to_right_.fd(), from, amount, MSG_NOSIGNAL);
    if (n < 0 && would_block()) return false;
    if (n <= 0) fail_closed(right());
    if (limiter_) limiter_->consume(static_cast<std::size_t>(n));
    sent += static_cast<std::size_t>(n);
    return true;
  };

  SteadyTime last_progress = std::chrono::steady_clock::now();
  while (true) {
    skip_finished_steps();
    if (send_step == step_count && recv_step == step_count) return;
    const SteadyTime now = std::chrono::steady_clock::now();
    bool progressed = recv_step < step_count && try_receive();
    skip_finished_steps();
    progressed = (send_step < step_count && try_send(now)) || progressed;
    if (progressed) {
      last_progress = now;
      continue;
    }
    // Nothing moved: sleep in poll(2) until a socket is ready, the throttle refills, or the
    // neighbours have been silent for the whole timeout.
    const bool has_sendable = send_step < step_count && sent < sendable_bytes();
    const bool throttled = has_sendable && limiter_ && limiter_->allowance(now) == 0;
    const bool wants_write = has_sendable && !throttled;
    const SteadyTime silent_at = last_progress + options_.timeout;
    SteadyTime wake_at = silent_at;
    if (throttled) wake_at = std::min(wake_at, limiter_->ready_at(sendable_bytes() - sent));
    pollfd fds[2];
    nfds_t count = 0;
    if (recv_step < step_count) fds[count++] = {from_left_.fd(), POLLIN, 0};
    if (wants_write) fds[count++] = {to_right_.fd(), POLLOUT, 0};
    if (options_.stop.stop_possible()) wake_at = std::min(wake_at, now + kStopPollInterval);
    if (::poll(fds, count, poll_timeout_ms(wake_at)) == 0 && std::chrono::steady_clock::now() >= silent_at) {
      // A right neighbour that stops reading blocks our sends; otherwise we are waiting on the left.
      fail_silent(wants_write ? right() : left());
    }
    if (options_.stop.stop_requested()) fail(wants_write ? right() : left(), "stopped while waiting in a collective");
  }
}

void TcpCommunicator::fail_silent(int peer, std::optional<std::chrono::milliseconds> waited) {
  fail(peer, describe(peer) + " did not answer within " + std::to_string(waited.value_or(options_.timeout).count()) + " ms");
}

void TcpCommunicator::fail_closed(int peer) { fail(peer, describe(peer) + " closed the connection", true); }

void TcpCommunicator::fail(int peer, const std::string& message, bool peer_closed) {
  // Closing now lets the neighbours fail at once instead of waiting out their own timeouts.
  to_right_.close();
  from_left_.close();
  spdlog::error("collective event=failed attempt_id={} rank={} peer={} reason=\"{}\"", options_.attempt_id, rank(),
                peer, message);
  broken_.emplace(peer, message, peer_closed);
  throw *broken_;
}

}  // namespace trainyard::neuron
