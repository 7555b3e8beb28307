// What webhooks send: the event's JSON, Slack messages (golden files) and storm summaries.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "daemon/events/event_json.h"
#include "daemon/webhooks/webhook_payload.h"
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

// A failure as the daemon tells it (daemon/attempt_end.cpp): the task, its run and its last output.
store::Event task_failed() {
  store::Event e = job_failed();
  e.details.update({{"name", "train-llm"},
                    {"job_ref", "18_1"},
                    {"attempt", 2},
                    {"nodes", "trn-1,trn-2"},
                    {"duration_s", 3725.4},
                    {"output", "step 40 loss 2.10\nWANDB_API_KEY=<masked> & <go>\nRuntimeError: CUDA out of memory"}});
  return e;
}

TEST(WebhookPayload, SlackJobFailedWithDashboardLink) {
  expect_golden(webhook_payload(task_failed(), WebhookFormat::slack, "https://ty.example.com/"), "slack_job_failed.json");
}

TEST(WebhookPayload, SlackJobFailedReadsAtAGlance) {
  const Json message = webhook_payload(task_failed(), WebhookFormat::slack, "https://ty.example.com");
  const Json& blocks = message["blocks"];
  EXPECT_EQ(blocks[0]["text"]["text"], ":x: Job 18_1 train-llm failed: node_lost");
  std::vector<std::string> fields;
  for (const Json& f : blocks[2]["fields"]) fields.push_back(f["text"]);
  EXPECT_EQ(fields, (std::vector<std::string>{"*User*\nalice", "*Share*\nvision", "*Nodes*\ntrn-1,trn-2", "*Attempt*\n2",
                                               "*Duration*\n1 h 02 min", "*Class*\nnode_lost"}));
  EXPECT_EQ(blocks[4]["text"]["text"],
            "*Last output*\n```step 40 loss 2.10\nWANDB_API_KEY=&lt;masked&gt; &amp; &lt;go&gt;\nRuntimeError: CUDA out of memory```");
  EXPECT_EQ(blocks[5]["elements"][0]["url"], "https://ty.example.com/jobs/5");
  EXPECT_EQ(blocks[5]["elements"][0]["text"]["text"], "Open job 18_1");
}

TEST(WebhookPayload, TheNotificationTextNamesTheJobAfterItsId) {
  store::Event event = task_failed();
  event.message = "job 18_1 failed (oom): rank 0 on trn-1 exited with code 1";
  EXPECT_EQ(webhook_payload(event, WebhookFormat::slack, "")["text"],
            "[error] job 18_1 `train-llm` failed (oom): rank 0 on trn-1 exited with code 1");
  event.details["name"] = "a`b";
  EXPECT_EQ(webhook_payload(event, WebhookFormat::slack, "")["text"],
            "[error] job 18_1 `ab` failed (oom): rank 0 on trn-1 exited with code 1")
      << "a name's backtick cannot end the quote";
  EXPECT_EQ(webhook_payload(node_down(), WebhookFormat::slack, "")["text"],
            "[" + to_string(node_down().severity) + "] " + node_down().message);
}

TEST(WebhookPayload, AJobsOwnBackticksNeverCloseTheOutputsCodeBlock) {
  store::Event event = task_failed();
  event.details["output"] = "```\n*bold* <!channel>\n``` done `x`";
  const std::string text = webhook_payload(event, WebhookFormat::slack, "https://ty.example.com")["blocks"][4]["text"]["text"];
  ASSERT_TRUE(text.starts_with("*Last output*\n```")) << text;
  ASSERT_TRUE(text.ends_with("```")) << text;
  const std::string inside = text.substr(std::string("*Last output*\n```").size(), text.size() - 3 - std::string("*Last output*\n```").size());
  EXPECT_EQ(inside.find("``"), std::string::npos) << "no two backticks touch inside the block: " << inside;
  EXPECT_NE(inside.find("&lt;!channel&gt;"), std::string::npos) << inside;
  EXPECT_NE(inside.find("`x`"), std::string::npos) << "a lone backtick pair stays as it was: " << inside;
}

TEST(WebhookPayload, SlackMessagesStayWithinSlacksLimits) {
  store::Event huge = task_failed();
  huge.message = std::string(10'000, 'm');
  huge.details["name"] = std::string(500, 'n');
  huge.details["suggestion"] = std::string(10'000, 's');
  huge.details["output"] = std::string(10'000, '<');
  const Json message = webhook_payload(huge, WebhookFormat::slack, "https://ty.example.com");
  const Json& blocks = message["blocks"];
  ASSERT_LE(blocks.size(), 50u);
  for (const Json& block : blocks) {
    if (block["type"] == "header") {
      EXPECT_LE(block["text"]["text"].get<std::string>().size(), 150u);
    }
    if (block.contains("text") && block["type"] == "section") {
      EXPECT_LE(block["text"]["text"].get<std::string>().size(), 3000u) << block.dump().substr(0, 200);
    }
    if (block.contains("fields")) {
      EXPECT_LE(block["fields"].size(), 10u);
      for (const Json& f : block["fields"]) {
        EXPECT_LE(f["text"].get<std::string>().size(), 2000u);
      }
    }
  }
  const std::string output = blocks[4]["text"]["text"];
  EXPECT_EQ(output.substr(output.size() - 3), "```") << "the code block is closed after the cut";
}

TEST(WebhookPayload, SlackNodeDownWithoutPublicUrl) {
  expect_golden(webhook_payload(node_down(), WebhookFormat::slack, ""), "slack_node_down.json");
}

TEST(WebhookPayload, SlackNodeDownLinksTheNodePage) {
  const Json message = webhook_payload(node_down(), WebhookFormat::slack, "https://ty.example.com");
  const Json& blocks = message["blocks"];
  EXPECT_EQ(blocks[0]["text"]["text"], ":red_circle: Node trn-7 down");
  ASSERT_GE(blocks.size(), 2u);
  const Json& actions = blocks[blocks.size() - 2];
  EXPECT_EQ(actions["type"], "actions");
  EXPECT_EQ(actions["elements"][0]["url"], "https://ty.example.com/nodes/trn-7");
  EXPECT_EQ(actions["elements"][0]["text"]["text"], "Open node trn-7");
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
  const Json storm = webhook_payload(folded, WebhookFormat::slack);
  EXPECT_EQ(storm["blocks"][1]["text"]["text"],
            "• 37 more job.failed: node_lost on trn-7, trn-8, trn-9, trn-10, trn-11 ...\n• 1 more node.down on trn-7")
      << "a compact list, one kind a line";
  expect_golden(storm, "slack_folded.json");
  expect_golden(webhook_payload(folded, WebhookFormat::json), "json_folded.json");
}

TEST(WebhookPayload, TheTestSampleIsWhatTheWebhookSubscribesTo) {
  const TimePoint now = *parse_time("2026-11-24T21:00:00.000Z");
  const store::Event failure = sample_event({"job.*"}, now);
  EXPECT_EQ(failure.kind, "job.failed");
  const Json slack = webhook_payload(failure, WebhookFormat::slack, "");
  EXPECT_EQ(slack["blocks"][0]["text"]["text"], ":x: Job 0 sample-job (test) failed: oom");
  EXPECT_EQ(slack["blocks"][4]["text"]["text"].get<std::string>().rfind("*Last output*\n```", 0), 0u) << slack.dump(2);
  EXPECT_EQ(sample_event({"node.*"}, now).kind, "node.down");
  EXPECT_EQ(sample_event({"job.succeeded"}, now).kind, "job.succeeded");
  EXPECT_EQ(sample_event({"canary.*"}, now).kind, "job.failed") << "none of the samples matches: a failure";
  EXPECT_NE(sample_event({"node.*"}, now).message.find("(test)"), std::string::npos);
}

TEST(WebhookFormat, ParsesOnlyTheTwoFormats) {
  EXPECT_EQ(parse_webhook_format("slack"), WebhookFormat::slack);
  EXPECT_EQ(parse_webhook_format("json"), WebhookFormat::json);
  EXPECT_EQ(parse_webhook_format("Slack"), std::nullopt);
  EXPECT_EQ(to_string(WebhookFormat::slack), "slack");
}

}  // namespace
}  // namespace trainyard::daemon
