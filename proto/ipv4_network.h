#pragma once
// IPv4 addresses and networks as numbers, for the job networks attempts get (daemon/policy/job_address_pool.h,
// agent/job_network.h): "10.240.0.0/12" parsed, compared and printed without a socket library.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainyard::inline proto {

using Ipv4 = std::uint32_t;  // host byte order: 10.0.0.1 is 0x0A000001

// "a.b.c.d" with each part 0-255 in decimal and no leading zeros; nullopt for anything else.
std::optional<Ipv4> parse_ipv4(std::string_view text);
std::string ipv4_text(Ipv4 address);

struct Ipv4Network {
  Ipv4 base = 0;  // its first address; the bits past the prefix are zero
  int prefix = 32;

  std::uint64_t size() const { return std::uint64_t{1} << (32 - prefix); }
  Ipv4 last() const { return static_cast<Ipv4>(base + size() - 1); }
  bool contains(Ipv4 address) const { return address >= base && address <= last(); }
  bool contains(const Ipv4Network& other) const { return other.base >= base && other.last() <= last(); }
  std::string text() const;  // "10.240.0.0/12"
  bool operator==(const Ipv4Network&) const = default;
};

// "a.b.c.d/N" with 0 <= N <= 32 and no bits set past the prefix. Throws InvalidInput naming `field`.
Ipv4Network parse_ipv4_network(std::string_view text, const std::string& field);

}  // namespace trainyard::proto
