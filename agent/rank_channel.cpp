#include "agent/rank_channel.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

#include "proto/errors.h"

namespace trainyard::agent {

std::pair<neuron::Socket, neuron::Socket> make_rank_channel() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    throw std::system_error(errno, std::generic_category(), "socketpair for a simulated rank's channel");
  }
  return {neuron::Socket(fds[0]), neuron::Socket(fds[1])};
}

bool send_channel_message(int fd, const Json& message, int passed_fd, bool dont_wait) {
  const std::string text = message.dump();
  if (text.size() > kMaxChannelMessageBytes) return false;
  iovec iov{const_cast<char*>(text.data()), text.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (passed_fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* header = CMSG_FIRSTHDR(&msg);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(header), &passed_fd, sizeof(int));
  }
  const int flags = MSG_NOSIGNAL | (dont_wait ? MSG_DONTWAIT : 0);
  for (;;) {
    const ssize_t sent = ::sendmsg(fd, &msg, flags);
    if (sent >= 0) return true;
    if (errno != EINTR) return false;
  }
}

std::optional<ChannelMessage> receive_channel_message(int fd) {
  // A message a step: the buffer is kept per receiving thread rather than made for each.
  thread_local std::vector<char> buffer(kMaxChannelMessageBytes + 1);
  iovec iov{buffer.data(), buffer.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  // Room for more than one descriptor, so extra ones a sender forced on us are seen and closed.
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t received = -1;
  do {
    received = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
  } while (received < 0 && errno == EINTR);
  if (received <= 0) return std::nullopt;
  ChannelMessage out;
  for (cmsghdr* header = CMSG_FIRSTHDR(&msg); header; header = CMSG_NXTHDR(&msg, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int passed = -1;
      std::memcpy(&passed, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
      if (!out.passed.valid()) {
        out.passed = neuron::Socket(passed);
      } else {
        ::close(passed);
      }
    }
  }
  if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 || static_cast<std::size_t>(received) > kMaxChannelMessageBytes) {
    throw InvalidInput("channel message", "longer than " + std::to_string(kMaxChannelMessageBytes) + " bytes");
  }
  out.body = parse_json_text(std::string_view(buffer.data(), static_cast<std::size_t>(received)));
  if (!out.body.is_object() || out.body.size() != 1) {
    throw InvalidInput("channel message", "must be a JSON object with one key");
  }
  return out;
}

Json receive_start_message(int fd) {
  auto message = receive_channel_message(fd);
  if (!message) throw InvalidInput("start", "the channel closed before a start message");
  if (!message->body.contains("start")) throw InvalidInput("start", "the first message must be the start message");
  return std::move(message->body["start"]);
}

}  // namespace trainyard::agent
