// POST /v1/webhooks bodies: what is accepted, what is refused (naming the field), and which
// events a webhook wants.
#include <gtest/gtest.h>

#include "daemon/webhooks/webhook_spec.h"
#include "proto/errors.h"

namespace trainyard::daemon {
namespace {

std::string refused_field(const std::string& body) {
  try {
    parse_webhook_request(Json::parse(body));
  } catch (const InvalidInput& e) {
    return e.field();
  }
  return "(accepted)";
}

TEST(WebhookRequest, AcceptsTheIssuesExample) {
  const WebhookRequest r = parse_webhook_request(Json::parse(
      R"({"url": "https://hooks.slack.com/services/T/B/x", "events": ["job.failed", "node.*"], "format": "slack",
          "filter": {"share": "vision", "user": "alice", "job": 5}})"));
  EXPECT_EQ(r.events, (std::vector<std::string>{"job.failed", "node.*"}));
  EXPECT_EQ(r.format, "slack");
  EXPECT_EQ(r.filter, Json::parse(R"({"share": "vision", "user": "alice", "job": 5})"));
  EXPECT_EQ(parse_webhook_request(Json::parse(R"({"url": "http://h/", "events": ["audit.*"]})")).format, "slack");
}

TEST(WebhookRequest, RefusalsNameTheField) {
  EXPECT_EQ(refused_field(R"({"url": "ftp://h/", "events": ["job.failed"]})"), "url");
  EXPECT_EQ(refused_field(R"({"events": ["job.failed"]})"), "url");
  EXPECT_EQ(refused_field(R"({"url": "http://h/", "events": ["job.exploded"]})"), "events[0]");
  EXPECT_EQ(refused_field(R"({"url": "http://h/", "events": ["job.failed", "nodes.*"]})"), "events[1]");
  EXPECT_EQ(refused_field(R"({"url": "http://h/", "events": []})"), "events");
  EXPECT_EQ(refused_field(R"({"url": "http://h/", "events": ["job.failed"], "format": "xml"})"), "format");
  EXPECT_EQ(refused_field(R"({"url": "http://h/", "events": ["job.failed"], "colour": "red"})"), "colour");
  EXPECT_EQ(refused_field(R"({"url": "http://h/", "events": ["job.failed"], "filter": {"team": "x"}})"), "filter.team");
  EXPECT_EQ(refused_field(R"({"url": "http://h/", "events": ["job.failed"], "filter": {"share": ")" + std::string(65, 's') + R"("}})"),
            "filter.share");
  EXPECT_EQ(refused_field(R"({"url": "http://h/", "events": [")" + std::string(65, '*') + R"("]})"), "events[0]");
}

TEST(WebhookWants, GlobsAndFilter) {
  store::WebhookRecord w;
  w.events = {"job.failed", "node.*"};
  w.filter = {{"share", "vision"}};
  store::Event e;
  e.kind = "job.failed";
  e.share = "vision";
  EXPECT_TRUE(webhook_wants(w, e));
  e.share = "nlp";
  EXPECT_FALSE(webhook_wants(w, e));
  e.share = "vision";
  e.kind = "job.succeeded";
  EXPECT_FALSE(webhook_wants(w, e));
  w.filter = {{"job", 5}};
  e.kind = "node.down";
  EXPECT_FALSE(webhook_wants(w, e));  // a node event concerns no job
  e.job_id = 5;
  EXPECT_TRUE(webhook_wants(w, e));
  w.filter = {{"user", "alice"}};
  e.user = "bob";
  EXPECT_FALSE(webhook_wants(w, e));
}

TEST(WebhookRequest, AUsersWebhookMayNotNameAuditEvents) {
  const auto refusal = [](std::vector<std::string> events) {
    try {
      check_user_webhook_events(events);
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(refusal({"job.failed", "audit.*"}), "events[1]");
  EXPECT_EQ(refusal({"audit.job.cancelled"}), "events[0]");
  EXPECT_EQ(refusal({"job.*", "node.down"}), "(accepted)");
}

TEST(WebhookWants, AUsersWebhookNeverDeliversAuditEventsEvenThroughAWildcard) {
  store::WebhookRecord w;
  w.events = {"*"};
  w.filter = {{"user", "alice"}};
  store::Event e;
  e.kind = "audit.job.cancelled";
  e.user = "alice";
  EXPECT_TRUE(webhook_wants(w, e)) << "an admin's webhook hears the audit log";
  w.restricted = true;
  EXPECT_FALSE(webhook_wants(w, e));
  e.kind = "job.failed";
  EXPECT_TRUE(webhook_wants(w, e));
}

}  // namespace
}  // namespace trainyard::daemon
