#include "proto/ipv4_network.h"

#include <charconv>

#include "proto/errors.h"

namespace trainyard::inline proto {

std::optional<Ipv4> parse_ipv4(std::string_view text) {
  Ipv4 address = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (text.empty() || text.front() != '.') return std::nullopt;
      text.remove_prefix(1);
    }
    const std::size_t digits = text.find_first_not_of("0123456789");
    const std::size_t length = digits == std::string_view::npos ? text.size() : digits;
    if (length == 0 || length > 3 || (length > 1 && text.front() == '0')) return std::nullopt;
    unsigned value = 0;
    std::from_chars(text.data(), text.data() + length, value);
    if (value > 255) return std::nullopt;
    address = (address << 8) | value;
    text.remove_prefix(length);
  }
  if (!text.empty()) return std::nullopt;
  return address;
}

std::string ipv4_text(Ipv4 address) {
  return std::to_string(address >> 24) + "." + std::to_string((address >> 16) & 0xff) + "." +
         std::to_string((address >> 8) & 0xff) + "." + std::to_string(address & 0xff);
}

std::string Ipv4Network::text() const { return ipv4_text(base) + "/" + std::to_string(prefix); }

Ipv4Network parse_ipv4_network(std::string_view text, const std::string& field) {
  const auto quoted = "\"" + std::string(text.substr(0, 64)) + "\"";
  const std::size_t slash = text.find('/');
  const auto base = parse_ipv4(text.substr(0, slash));
  if (slash == std::string_view::npos || !base) {
    throw InvalidInput(field, "must be an IPv4 network as ADDRESS/PREFIX (for example 10.240.0.0/12), got " + quoted);
  }
  const std::string_view prefix_text = text.substr(slash + 1);
  int prefix = -1;
  const auto [end, error] = std::from_chars(prefix_text.data(), prefix_text.data() + prefix_text.size(), prefix);
  if (error != std::errc() || end != prefix_text.data() + prefix_text.size() || prefix < 0 || prefix > 32 ||
      (prefix_text.size() > 1 && prefix_text.front() == '0')) {
    throw InvalidInput(field, "the prefix length after '/' must be 0-32, got " + quoted);
  }
  const Ipv4Network network{*base, prefix};
  const Ipv4 host_bits = prefix == 0 ? ~Ipv4{0} : static_cast<Ipv4>((std::uint64_t{1} << (32 - prefix)) - 1);
  if ((*base & host_bits) != 0) {
    throw InvalidInput(field, "has bits set past its prefix: the network of " + quoted + " starts at " +
                                  ipv4_text(*base & ~host_bits));
  }
  return network;
}

}  // namespace trainyard::proto
