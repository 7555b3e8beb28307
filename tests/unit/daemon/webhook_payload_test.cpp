// What webhooks send: the event's JSON, Slack messages (golden files) and storm summaries.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "daemon/event_json.h"
#include "daemon/webhook_payload.h"
#include "proto/time.h"

namespace trainyard::daemon {
namespace {

// TRAINYARD_UPDATE_GOLDEN=1 rewrites the files from the code; review the diff before committing.
void expect_golden(const Json& actual, const std::string& name) {
  const std::string path = std::string(TRAINYARD_SOURCE_DIR) + "/tests/unit/daemon/golden/" + name;
  if (std::getenv("TRAINYARD_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << actual.dump(2) << "\n";
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing golden file " << path;
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(actual, Json::parse(text.str())) << name << " differs; the code renders:\n" << actual.dump(2);
}

store::Event job_failed() {
  store::Event e;
  e.seq = 123;
  e.at = *parse_time("2026-11-24T21:00:00.123Z");
  e.kind = "job.failed";
  e.severity = store::Severity::error;
  e.job_id = 5;
  e.attempt_id = 9;
  e.node = "trn-1";
  e.user = "alice";
  e.share = "vision";
  e.message = "job 5 failed: node trn-1 lost <heartbeat> & gone";
  e.details = {{"class", "node_lost"}, {"suggestion", "The node stopped answering; the job is retried elsewhere."}, {"exit_code", nullptr}};
  return e;
}

store::Event node_down() {
  store::Event e;
  e.seq = 124;
  e.at = *parse_time("2026-11-24T21:00:01.000Z");
  e.kind = "node.down";
  e.severity = store::Severity::warning;
  e.node = "trn-7";
  e.message = "node trn-7 is down: no heartbeat for 30 s";
  return e;
}

TEST(EventJson, IsTheContractShapeWithAbsentFieldsOmitted) {
  EXPECT_EQ(event_json(job_failed()), Json::parse(R"({"id": 123, "time": "2026-11-24T21:00:00.123Z", "type": "job.failed",
      "severity": "error", "job": 5, "attempt": 9, "node": "trn-1", "user": "alice", "share": "vision",
      "message": "job 5 failed: node trn-1 lost <heartbeat> & gone",
      "details": {"class": "node_lost", "suggestion": "The node stopped answering; the job is retried elsewhere.", "exit_code": null}})"));
  const Json node = event_json(node_down());
  for (const char* absent : {"job", "attempt", "user", "share"}) EXPECT_FALSE(node.contains(absent)) << absent;
}

TEST(WebhookPayload, JsonFormatIsTheEventItself) {
  EXPECT_EQ(webhook_payload(job_failed(), WebhookFormat::json, "https://ty.example.com"), event_json(job_failed()));
}

TEST(WebhookPayload, SlackJobFailedWithDashboardLink) {
  expect_golden(webhook_payload(job_failed(), WebhookFormat::slack, "https://ty.example.com/"), "slack_job_failed.json");
}

TEST(WebhookPayload, SlackNodeDownWithoutPublicUrl) {
  expect_golden(webhook_payload(node_down(), WebhookFormat::slack, ""), "slack_node_down.json");
}

TEST(WebhookPayload, SlackNodeDownLinksTheNodePage) {
  const Json message = webhook_payload(node_down(), WebhookFormat::slack, "https://ty.example.com");
  EXPECT_EQ(message["blocks"].back()["text"]["text"], "<https://ty.example.com/nodes/trn-7|Open node trn-7>");
}

TEST(StormFolding, SummarisesEachKindWithItsClassesAndNodes) {
  std::vector<store::Event> events;
  for (int i = 0; i < 37; ++i) {
    store::Event e = job_failed();
    e.seq = 200 + i;
    e.node = "trn-" + std::to_string(7 + i % 8);
    events.push_back(e);
  }
  events.push_back(node_down());
  events.back().seq = 300;
  const FoldedEvents folded = fold_events(events);
  EXPECT_EQ(folded.count, 38u);
  EXPECT_EQ(folded.first_seq, 200);
  EXPECT_EQ(folded.last_seq, 300);
  EXPECT_EQ(folded.message,
            "37 more job.failed: node_lost on trn-7, trn-8, trn-9, trn-10, trn-11 ...; 1 more node.down on trn-7");
  expect_golden(webhook_payload(folded, WebhookFormat::slack), "slack_folded.json");
  expect_golden(webhook_payload(folded, WebhookFormat::json), "json_folded.json");
}

TEST(WebhookFormat, ParsesOnlyTheTwoFormats) {
  EXPECT_EQ(parse_webhook_format("slack"), WebhookFormat::slack);
  EXPECT_EQ(parse_webhook_format("json"), WebhookFormat::json);
  EXPECT_EQ(parse_webhook_format("Slack"), std::nullopt);
  EXPECT_EQ(to_string(WebhookFormat::slack), "slack");
}

}  // namespace
}  // namespace trainyard::daemon
