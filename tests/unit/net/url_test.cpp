// net/url.h: the one URL parser, behind the agent's --server, the CLI's and webhooks.
#include <gtest/gtest.h>

#include <string>

#include "net/url.h"
#include "proto/errors.h"

namespace trainyard::net {
namespace {

TEST(ParseUrl, ReadsSchemeHostPortAndPath) {
  const Url plain = parse_url("http://127.0.0.1:8080/v1/agent", "--server");
  EXPECT_EQ(plain.scheme, "http");
  EXPECT_EQ(plain.host, "127.0.0.1");
  EXPECT_EQ(plain.port, 8080);
  EXPECT_EQ(plain.path, "/v1/agent");
  EXPECT_EQ(parse_url("http://daemon.example", "f").port, 80);
  EXPECT_EQ(parse_url("https://daemon.example/", "f").port, 443);
  EXPECT_EQ(parse_url("https://daemon.example/", "f").path, "/");
  const Url v6 = parse_url("https://[::1]:7000", "f");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 7000);
  EXPECT_EQ(parse_url("http://[::1]", "f").port, 80);
}

TEST(ParseUrl, LowerCasesTheSchemeAndHostAndKeepsTheQuery) {
  const Url url = parse_url("HTTPS://Daemon.Example:8443/v1/jobs?state=RUNNING", "f");
  EXPECT_EQ(url, (Url{"https", "daemon.example", 8443, "/v1/jobs?state=RUNNING"}));
  EXPECT_TRUE(url.tls());
  EXPECT_EQ(parse_url("http://h?x=1", "f").path, "/?x=1");
}

TEST(ParseUrl, ReadUrlSaysWhatIsWrongWithoutRepeatingTheUrl) {
  const proto::Result<Url> url = read_url("https://user:secret@hooks.example/T0/B0/token", "url");
  ASSERT_FALSE(url);
  EXPECT_EQ(url.error().field, "url");
  EXPECT_EQ(url.error().message, "must not carry a user name or password");
}

TEST(ParseUrl, RefusesMalformedUrlsNamingTheField) {
  for (const char* bad : {"127.0.0.1:80", "ftp://h:1", "http://:80", "http://h:0", "http://h:65536", "http://h:99999",
                          "http://h:x", "http://h:", "http://[::1", "http://[::1]x", "http://[]:80",
                          "http://u:p@h/", "http://h/#top", "http://h/a b", "http://h\x1b[31m/", "http://[zz::1]/"}) {
    try {
      parse_url(bad, "--server");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const InvalidInput& e) {
      EXPECT_EQ(e.field(), "--server") << bad;
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace trainyard::net
