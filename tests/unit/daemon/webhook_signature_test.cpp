// Webhook signing against Slack's published example ("Verifying requests from Slack").
#include <gtest/gtest.h>

#include "daemon/webhooks/webhook_signature.h"

namespace trainyard::daemon {
namespace {

constexpr std::string_view kSlackSecret = "8f742231b10e8888abcd99yyyzzz85a5";
constexpr std::string_view kSlackBody =
    "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&"
    "channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&"
    "response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&"
    "trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";

TEST(WebhookSignature, MatchesSlacksPublishedExample) {
  EXPECT_EQ(webhook_signature(kSlackSecret, std::int64_t{1531420618}, kSlackBody),
            "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503");
}

TEST(WebhookSignature, EveryInputChangesIt) {
  const std::string base = webhook_signature(kSlackSecret, std::int64_t{1531420618}, kSlackBody);
  EXPECT_NE(webhook_signature("other secret", std::int64_t{1531420618}, kSlackBody), base);
  EXPECT_NE(webhook_signature(kSlackSecret, std::int64_t{1531420619}, kSlackBody), base);
  EXPECT_NE(webhook_signature(kSlackSecret, std::int64_t{1531420618}, std::string(kSlackBody) + " "), base);
}

TEST(WebhookSignature, SecretsAreFreshAndLongEnough) {
  const std::string a = generate_webhook_secret();
  EXPECT_TRUE(a.starts_with("whsec_"));
  EXPECT_EQ(a.size(), 6u + 64u);
  EXPECT_NE(a, generate_webhook_secret());
}

}  // namespace
}  // namespace trainyard::daemon
