// Webhook URL policy: what any webhook may name, and what a user's may reach.
#include <gtest/gtest.h>

#include "daemon/webhooks/webhook_url.h"
#include "proto/errors.h"

namespace trainyard::daemon {
namespace {

std::string url_refusal(std::string_view url) {
  try {
    parse_webhook_url(url, "url");
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "url");
    return e.message();
  }
  return "";
}

TEST(WebhookUrl, ParsesSchemeHostPortAndTarget) {
  EXPECT_EQ(parse_webhook_url("https://Hooks.Slack.com/services/T0/B0/x", "url"),
            (net::Url{"https", "hooks.slack.com", 443, "/services/T0/B0/x"}));
  EXPECT_EQ(parse_webhook_url("http://127.0.0.1:8080", "url"), (net::Url{"http", "127.0.0.1", 8080, "/"}));
  EXPECT_EQ(parse_webhook_url("HTTP://[::1]:9/a?b=c", "url"), (net::Url{"http", "::1", 9, "/a?b=c"}));
  EXPECT_EQ(parse_webhook_url("http://h?x=1", "url"), (net::Url{"http", "h", 80, "/?x=1"}));
}

TEST(WebhookUrl, RefusesWhatIsNotAPlainHttpUrl) {
  EXPECT_EQ(url_refusal("ftp://example.com/"), "scheme must be http or https, not 'ftp'");
  EXPECT_EQ(url_refusal("example.com/hook"), "must start with http:// or https://");
  EXPECT_EQ(url_refusal("https://user:pw@example.com/"), "must not carry a user name or password");
  EXPECT_EQ(url_refusal("https://example.com:0/"), "port must be 1..65535");
  EXPECT_EQ(url_refusal("https://example.com:65536/"), "port must be 1..65535");
  EXPECT_EQ(url_refusal("https://example.com:/"), "port must be 1..65535");
  EXPECT_EQ(url_refusal("https:///path"), "has no host");
  EXPECT_EQ(url_refusal("https://exa mple.com/"), "host holds characters a host name cannot");
  EXPECT_EQ(url_refusal("https://[::1/"), "unterminated IPv6 address");
  EXPECT_EQ(url_refusal("https://[zz::1]/"), "invalid IPv6 address");
  EXPECT_EQ(url_refusal("https://example.com/a b"), "path holds spaces or control characters");
  EXPECT_EQ(url_refusal("https://example.com/#frag"), "must not carry a fragment");
  EXPECT_EQ(url_refusal("https://example.com/" + std::string(2100, 'a')), "longer than 2048 characters");
  EXPECT_EQ(url_refusal("https://" + std::string(254, 'a') + "/"), "host is longer than 253 characters");
}

TEST(WebhookUrl, PublicAddresses) {
  for (const char* ok : {"8.8.8.8", "1.1.1.1", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8"}) {
    EXPECT_TRUE(is_public_address(ok)) << ok;
  }
  for (const char* no : {"127.0.0.1", "127.255.0.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
                         "169.254.169.254", "0.0.0.0", "100.64.0.1", "224.0.0.1", "255.255.255.255", "::", "::1",
                         "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
                         "::ffff:169.254.169.254", "64:ff9b::7f00:1", "2001:db8::1", "not-an-address", ""}) {
    EXPECT_FALSE(is_public_address(no)) << no;
  }
}

TEST(WebhookUrl, UsersNeedAnAllowedPublicHost) {
  const std::vector<std::string> allowed = {"hooks.slack.com", "*.example.com", "8.8.8.8", "127.0.0.1"};
  EXPECT_TRUE(host_allowed("HOOKS.slack.com", allowed));
  EXPECT_TRUE(host_allowed("a.b.example.com", allowed));
  EXPECT_FALSE(host_allowed("example.com", allowed));
  EXPECT_FALSE(host_allowed("evilexample.com", allowed));
  EXPECT_FALSE(host_allowed("slack.com", allowed));
  EXPECT_NO_THROW(check_user_webhook_host(parse_webhook_url("https://8.8.8.8/x", "url"), allowed, "url"));
  EXPECT_THROW(check_user_webhook_host(parse_webhook_url("https://evil.com/", "url"), allowed, "url"), InvalidInput);
  // Even an admin's allow-list entry does not open loopback to users.
  EXPECT_THROW(check_user_webhook_host(parse_webhook_url("http://127.0.0.1:9/", "url"), allowed, "url"), InvalidInput);
}

}  // namespace
}  // namespace trainyard::daemon
