#pragma once
// Open descriptors handed from one process to another over a Unix socket (SCM_RIGHTS): the job's
// output files, which its child opens as the job's account before exec (agent/process_spawn.h).
// Sending allocates nothing and makes one system call, so the child may do it before exec.
#include <sys/socket.h>

#include <cstring>

namespace trainyard::agent {

inline constexpr int kMaxPassedDescriptors = 2;

// One byte of data carrying up to kMaxPassedDescriptors descriptors.
struct DescriptorMessage {
  char byte = 0;
  iovec data{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedDescriptors)] = {};
  msghdr header{};

  DescriptorMessage() {
    header.msg_iov = &data;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = sizeof control;
  }
  DescriptorMessage(const DescriptorMessage&) = delete;
  DescriptorMessage& operator=(const DescriptorMessage&) = delete;
};

// Sends `count` (at most kMaxPassedDescriptors) descriptors; false when the socket refused them.
inline bool send_descriptors(int socket, const int* fds, int count) {
  DescriptorMessage message;
  const std::size_t bytes = sizeof(int) * static_cast<std::size_t>(count);
  message.header.msg_controllen = CMSG_SPACE(bytes);
  cmsghdr* rights = CMSG_FIRSTHDR(&message.header);
  rights->cmsg_level = SOL_SOCKET;
  rights->cmsg_type = SCM_RIGHTS;
  rights->cmsg_len = CMSG_LEN(bytes);
  std::memcpy(CMSG_DATA(rights), fds, bytes);
  return ::sendmsg(socket, &message.header, MSG_NOSIGNAL) == 1;
}

// Takes a message waiting on `socket` without blocking; fills `fds` (close-on-exec) in the order
// sent and returns how many, 0 when none was waiting.
inline int receive_descriptors(int socket, int* fds) {
  DescriptorMessage message;
  if (::recvmsg(socket, &message.header, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) <= 0) return 0;
  const cmsghdr* rights = CMSG_FIRSTHDR(&message.header);
  if (!rights || rights->cmsg_level != SOL_SOCKET || rights->cmsg_type != SCM_RIGHTS) return 0;
  const int count = static_cast<int>((rights->cmsg_len - CMSG_LEN(0)) / sizeof(int));
  const int kept = count < kMaxPassedDescriptors ? count : kMaxPassedDescriptors;
  std::memcpy(fds, CMSG_DATA(rights), sizeof(int) * static_cast<std::size_t>(kept));
  return kept;
}

}  // namespace trainyard::agent
