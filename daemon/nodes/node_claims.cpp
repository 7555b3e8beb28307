#include "daemon/nodes/node_claims.h"

#include <arpa/inet.h>

#include <array>
#include <cstdint>
#include <optional>

namespace trainyard::daemon {
namespace {

using AddressBytes = std::array<unsigned char, 16>;

// An IP literal as IPv6 bytes (IPv4 as ::ffff:a.b.c.d), so 127.0.0.1 and ::ffff:127.0.0.1 compare equal.
std::optional<AddressBytes> ip_bytes(std::string host) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  AddressBytes bytes{};
  std::array<unsigned char, 4> v4{};
  if (::inet_pton(AF_INET, host.c_str(), v4.data()) == 1) {
    bytes[10] = bytes[11] = 0xff;
    std::copy(v4.begin(), v4.end(), bytes.begin() + 12);
    return bytes;
  }
  if (::inet_pton(AF_INET6, host.c_str(), bytes.data()) == 1) return bytes;
  return std::nullopt;
}

}  // namespace

std::string host_of(const std::string& address) {
  const auto colon = address.rfind(':');
  return colon == std::string::npos ? address : address.substr(0, colon);
}

Result<void> check_node_claims(const HelloMsg& hello, const std::string& remote, const NodeClaimLimits& limits) {
  if (hello.cores > limits.max_cores) {
    return Error::invalid_input("cores", "node " + hello.name + " claims " + std::to_string(hello.cores) +
                                             " cores; this daemon admits nodes of at most " +
                                             std::to_string(limits.max_cores) + " (--max-node-cores)");
  }
  if (hello.memory_mb > limits.max_memory_mb) {
    return Error::invalid_input("memory_mb", "node " + hello.name + " claims " + std::to_string(hello.memory_mb) +
                                                 " MB of memory; this daemon admits nodes of at most " +
                                                 std::to_string(limits.max_memory_mb) + " MB (--max-node-memory-mb)");
  }
  if (hello.data_addr.empty()) return {};
  const auto claimed = ip_bytes(host_of(hello.data_addr));
  const auto seen = ip_bytes(host_of(remote));
  if (!claimed || !seen || *claimed != *seen) {
    return Error::invalid_input("data_addr", "node " + hello.name + " claims data address " + hello.data_addr +
                                                 ", which is not on the address it connects from (" + host_of(remote) +
                                                 "): a node's data plane must listen on its own address (--data-listen)");
  }
  return {};
}

void add_node_claim_flags(FlagParser& flags, NodeClaimLimits& limits) {
  flags.add_int("max-node-cores", "the most cores a node may claim in its hello; a node claiming more is refused",
                &limits.max_cores, 1, 1'000'000);
  flags.add_int("max-node-memory-mb",
                "the most memory (MB) a node may claim in its hello; a node claiming more is "
                "refused",
                &limits.max_memory_mb, 1, INT64_MAX);
}

}  // namespace trainyard::daemon
