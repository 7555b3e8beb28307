// A user's webhooks are bounded (--webhook-max-per-user), also in a burst whose creations are all
// still being stored, and the audit log never records a webhook URL's path (a Slack URL's path is
// its secret).
#include <gtest/gtest.h>

#include "daemon/webhooks/webhook_url.h"
#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

const char* const kSlackBody = R"({"url":"https://hooks.example.com/services/T000/B000/XXXXSECRETXXXX","events":["job.failed"]})";

class WebhookLimits : public ApiTest {
 protected:
  WebhookLimits() { api.set_webhooks(webhooks, WebhookOptions{.allowed_hosts = {"hooks.example.com"}, .max_per_user = 3}); }
  WebhookRegistry webhooks{{}, 0};
};

TEST_F(WebhookLimits, AUsersBurstStopsAtTheLimitWhileAdminsAndOthersAreNotCounted) {
  std::vector<std::shared_ptr<Reply>> burst;
  for (int i = 0; i < 5; ++i) burst.push_back(send("POST", "/v1/webhooks", kAlice, kSlackBody));
  cluster.settle();
  int created = 0, refused = 0;
  for (const auto& reply : burst) {
    ASSERT_EQ(reply->answers, 1);
    if (reply->status == 201) ++created;
    if (reply->status == 409) {
      ++refused;
      EXPECT_NE(reply->body["error"]["message"].get<std::string>().find("--webhook-max-per-user 3"), std::string::npos)
          << reply->text;
    }
  }
  EXPECT_EQ(created, 3) << "creations still being stored count against the limit";
  EXPECT_EQ(refused, 2);
  EXPECT_EQ(call("POST", "/v1/webhooks", kBob, kSlackBody).status, 201) << "bob's room is his own";
  EXPECT_EQ(call("POST", "/v1/webhooks", kAdmin, kSlackBody).status, 201) << "an admin is not bounded";
  EXPECT_EQ(call("DELETE", "/v1/webhooks/1", kAlice).status, 200);
  EXPECT_EQ(call("POST", "/v1/webhooks", kAlice, kSlackBody).status, 201) << "a deleted webhook makes room";
}

TEST_F(WebhookLimits, TheAuditLogNamesAWebhooksHostButNeverItsPath) {
  ASSERT_EQ(call("POST", "/v1/webhooks", kAlice, kSlackBody).status, 201);
  ASSERT_EQ(call("DELETE", "/v1/webhooks/1", kAlice).status, 200);
  int audited = 0;
  for (const store::Event& event : cluster.memory.events_after(0, 1000)) {
    if (!event.kind.starts_with("audit.webhook.")) continue;
    ++audited;
    EXPECT_EQ(event.details["details"]["url"], "https://hooks.example.com:443/<masked>") << event.kind;
    EXPECT_EQ(event.details.dump().find("SECRET"), std::string::npos) << event.details.dump();
  }
  EXPECT_EQ(audited, 2);
}

TEST(WebhookUrl, WithoutItsPathKeepsSchemeHostAndPort) {
  EXPECT_EQ(url_without_path(parse_webhook_url("http://[2001:db8::1]:8080/a/b?c=d", "url")), "http://[2001:db8::1]:8080/<masked>");
}

}  // namespace
}  // namespace trainyard::daemon::testing
