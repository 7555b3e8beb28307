#include "daemon/webhooks/webhook_url.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "proto/errors.h"

namespace trainyard::daemon {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

struct V4Block {
  std::array<std::uint8_t, 4> prefix;
  int bits;
};

// Not reachable as a public service: this-network, private (RFC 1918), shared CGNAT, loopback,
// link-local, IETF protocol assignments, benchmarking, multicast, reserved and broadcast.
constexpr std::array kNonPublicV4 = {
    V4Block{{0, 0, 0, 0}, 8},     V4Block{{10, 0, 0, 0}, 8},    V4Block{{100, 64, 0, 0}, 10},
    V4Block{{127, 0, 0, 0}, 8},   V4Block{{169, 254, 0, 0}, 16}, V4Block{{172, 16, 0, 0}, 12},
    V4Block{{192, 0, 0, 0}, 24},  V4Block{{192, 168, 0, 0}, 16}, V4Block{{198, 18, 0, 0}, 15},
    V4Block{{224, 0, 0, 0}, 4},   V4Block{{240, 0, 0, 0}, 4},
};

bool in_block(const std::uint8_t* address, const std::uint8_t* prefix, int bits) {
  for (int i = 0; bits > 0; ++i, bits -= 8) {
    const std::uint8_t mask = bits >= 8 ? 0xff : static_cast<std::uint8_t>(0xff << (8 - bits));
    if ((address[i] & mask) != (prefix[i] & mask)) return false;
  }
  return true;
}

bool is_public_v4(const std::uint8_t* address) {
  return std::none_of(kNonPublicV4.begin(), kNonPublicV4.end(),
                      [&](const V4Block& b) { return in_block(address, b.prefix.data(), b.bits); });
}

bool is_public_v6(const std::array<std::uint8_t, 16>& a) {
  static constexpr std::array<std::uint8_t, 16> kV4Mapped = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static constexpr std::array<std::uint8_t, 16> kNat64 = {0x00, 0x64, 0xff, 0x9b};
  static constexpr std::array<std::uint8_t, 16> kZero{};
  // v4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach the IPv4 address they embed.
  if (in_block(a.data(), kV4Mapped.data(), 96) || in_block(a.data(), kNat64.data(), 96)) return is_public_v4(a.data() + 12);
  if (in_block(a.data(), kZero.data(), 96)) return false;  // unspecified, loopback, deprecated v4-compatible
  const std::uint8_t first = a[0];
  if (first == 0xff) return false;                        // multicast
  if ((first & 0xfe) == 0xfc) return false;               // unique local (fc00::/7), the private range
  if (first == 0xfe && (a[1] & 0x80) == 0x80) return false;  // link-local fe80::/10 and site-local fec0::/10
  if (first == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8) return false;  // documentation
  return true;
}

}  // namespace

net::Url parse_webhook_url(std::string_view text, const std::string& field) {
  if (text.size() > kMaxWebhookUrlLength) {
    throw InvalidInput(field, "longer than " + std::to_string(kMaxWebhookUrlLength) + " characters");
  }
  proto::Result<net::Url> url = net::read_url(text, field);
  if (!url) throw InvalidInput(field, url.error().message);
  return std::move(url).value();
}

std::string url_without_path(const net::Url& url) {
  const bool v6 = url.host.find(':') != std::string::npos;
  return url.scheme + "://" + (v6 ? "[" + url.host + "]" : url.host) + ":" + std::to_string(url.port) + "/<masked>";
}

bool is_public_address(std::string_view address) {
  const std::string text(address);
  std::array<std::uint8_t, 16> bytes{};
  if (inet_pton(AF_INET, text.c_str(), bytes.data()) == 1) return is_public_v4(bytes.data());
  if (inet_pton(AF_INET6, text.c_str(), bytes.data()) == 1) return is_public_v6(bytes);
  return false;
}

bool host_allowed(std::string_view host, const std::vector<std::string>& allowed_hosts) {
  const std::string name = lower(host);
  return std::any_of(allowed_hosts.begin(), allowed_hosts.end(), [&](const std::string& entry) {
    const std::string pattern = lower(entry);
    if (pattern.starts_with("*.")) return name.size() > pattern.size() - 1 && name.ends_with(pattern.substr(1));
    return name == pattern;
  });
}

void check_user_webhook_host(const net::Url& url, const std::vector<std::string>& allowed_hosts,
                             const std::string& field) {
  if (!host_allowed(url.host, allowed_hosts)) {
    throw InvalidInput(field, "host '" + url.host + "' is not on the daemon's --webhook-allowed-hosts");
  }
  std::array<std::uint8_t, 16> bytes{};
  const bool literal = inet_pton(AF_INET, url.host.c_str(), bytes.data()) == 1 ||
                       inet_pton(AF_INET6, url.host.c_str(), bytes.data()) == 1;
  if (literal && !is_public_address(url.host)) {
    throw InvalidInput(field, "address " + url.host + " is loopback, link-local, private or reserved");
  }
}

}  // namespace trainyard::daemon
