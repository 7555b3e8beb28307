#pragma once
// Where a webhook may point. Every URL: one net/url.h reads, of a bounded length. A user's (not an admin's) webhook
// must also name a host on the admin's allow-list, and every address that host resolves to must
// be public: not loopback, link-local, private, unspecified, multicast or reserved, IPv4 and IPv6
// alike (v4-mapped IPv6 judged by its IPv4). The delivery client checks the address it actually
// connects to again, so a DNS answer that changes after registration (rebinding) is refused too.
// Pure: resolution is the caller's.
#include <string>
#include <string_view>
#include <vector>

#include "net/url.h"

namespace trainyard::daemon {

inline constexpr std::size_t kMaxWebhookUrlLength = 2048;

// Throws InvalidInput(field) naming what is wrong.
net::Url parse_webhook_url(std::string_view text, const std::string& field);

// The URL as a record others may read shows it (the audit log): scheme, host and port, the path
// masked, since a Slack or similar webhook's path is its secret.
std::string url_without_path(const net::Url& url);

// Whether `address` (an IPv4 or IPv6 literal) is one a user's webhook may reach; false for text
// that is not an address.
bool is_public_address(std::string_view address);

// Whether `host` is on the allow-list: an entry equal to it, or an entry "*.example.com" that it
// ends with (a sub-domain; "example.com" itself needs its own entry). Case-insensitive.
bool host_allowed(std::string_view host, const std::vector<std::string>& allowed_hosts);

// A user's webhook URL: allowed host, and an IP literal must be public. Throws InvalidInput(field).
void check_user_webhook_host(const net::Url& url, const std::vector<std::string>& allowed_hosts,
                             const std::string& field);

}  // namespace trainyard::daemon
