// The outbox's lanes with a fake receiver, the in-memory store and a manual clock: order, signing,
// retries with the same event id, Retry-After, dead letters and re-sending, storm folding, resuming
// after a restart, and one webhook's failures not delaying another's.
#include <gtest/gtest.h>

#include <list>

#include "daemon/webhooks/webhook_outbox.h"
#include "daemon/webhooks/webhook_signature.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

using namespace std::chrono_literals;

struct Sent {
  net::OutboundRequest request;
  std::function<void(net::OutboundResponse)> answer;
  std::string header(std::string_view name) const {
    for (const auto& [n, v] : request.headers) {
      if (n == name) return v;
    }
    return "";
  }
};

class OutboxTest : public ::testing::Test {
 protected:
  OutboxTest() { registry.emplace(std::vector<store::WebhookRecord>{}, 0); }

  void start_outbox() {
    outbox.emplace(cluster.worker, cluster.timers, cluster.clock, options,
                   [this](net::OutboundRequest r, std::function<void(net::OutboundResponse)> done) {
                     sent.push_back({std::move(r), std::move(done)});
                   },
                   metrics.emplace_back(), 7);
    outbox->start(*registry);
    cluster.settle();
  }

  store::WebhookRecord add_webhook(std::string url, std::vector<std::string> events = {"job.*"}) {
    store::WebhookRecord w{registry->next_id(), "root", cluster.clock.system_now(), std::move(url), std::move(events), "json",
                    Json::object(), "whsec_test", 0, false};
    cluster.worker.write(store::Change{.webhooks = {w}}, [](const Result<void>&, store::Change&) {});
    cluster.settle();
    registry->add(w);
    cluster.settle();
    return w;
  }

  void emit(int count, const std::string& kind = "job.failed") {
    store::Change change;
    for (int i = 0; i < count; ++i) {
      store::Event e;
      e.at = cluster.clock.system_now();
      e.kind = kind;
      e.job_id = i + 1;
      e.message = "job " + std::to_string(i + 1) + " failed";
      change.events.push_back(e);
    }
    cluster.worker.write(std::move(change), [](const Result<void>&, store::Change&) {});
    cluster.advance(options.poll_interval);
  }

  // Answers the oldest unanswered request.
  void answer(int status, std::string retry_after = "") {
    ASSERT_LT(answered, sent.size());
    net::OutboundResponse r;
    r.status = status;
    r.retry_after = std::move(retry_after);
    sent[answered++].answer(r);
    cluster.settle();
  }

  std::vector<store::WebhookDelivery> deliveries(std::int64_t id) { return cluster.memory.webhook_deliveries(id, std::nullopt, 1000); }

  Cluster cluster;
  std::list<prom::Registry> metrics;  // a restarted outbox registers its families anew
  WebhookOptions options{.backoff = {{100ms, 1s, Jitter::full}, 10s}, .storm = {5, 1min}};
  std::optional<WebhookRegistry> registry;
  std::optional<WebhookOutbox> outbox;
  std::vector<Sent> sent;
  std::size_t answered = 0;
};

TEST_F(OutboxTest, DeliversWantedEventsInOrderSignedAndMovesTheCursor) {
  start_outbox();
  const store::WebhookRecord w = add_webhook("http://127.0.0.1:9/hook");
  emit(1, "node.down");  // not wanted
  emit(3);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(sent.size(), answered + 1) << "one message at a time";
    const Sent& s = sent[answered];
    EXPECT_EQ(s.request.host, "127.0.0.1");
    EXPECT_EQ(s.request.target, "/hook");
    EXPECT_EQ(s.header("X-Trainyard-Signature"),
              webhook_signature("whsec_test", s.header("X-Trainyard-Request-Timestamp"), s.request.body));
    const Json body = Json::parse(s.request.body);
    EXPECT_EQ(body["type"], "job.failed");
    EXPECT_EQ(s.header("X-Trainyard-Event-Id"), std::to_string(body["id"].get<std::int64_t>()));
    answer(200);
  }
  EXPECT_EQ(cluster.memory.load().webhooks.at(0).cursor_seq, 4);
  const auto done = deliveries(w.id);
  ASSERT_EQ(done.size(), 3u);
  for (const auto& d : done) EXPECT_EQ(d.state, store::DeliveryState::delivered);
  EXPECT_EQ(metrics.back().render().find("trainyard_webhook_deliveries_total{result=\"delivered\"} 3") != std::string::npos, true);
}

TEST_F(OutboxTest, ADeliveryRecordWhoseCommitFailedIsWrittenAgain) {
  start_outbox();
  const store::WebhookRecord w = add_webhook("http://127.0.0.1:9/hook");
  emit(1);
  ASSERT_EQ(sent.size(), 1u);
  cluster.store.fail_next_commit();  // the delivered record's
  answer(200);
  EXPECT_EQ(cluster.store.commits_failed(), 1) << "the test's premise: the record's commit failed";
  cluster.advance(options.poll_interval);
  const auto recorded = deliveries(w.id);
  ASSERT_EQ(recorded.size(), 1u) << "the delivery was sent but never recorded";
  EXPECT_EQ(recorded[0].state, store::DeliveryState::delivered);
  EXPECT_EQ(recorded[0].n, 1);
  EXPECT_EQ(sent.size(), 1u) << "recorded again, not sent again";
}

TEST_F(OutboxTest, RetriesTheSameEventIdHonoursRetryAfterThenDeadLetters) {
  start_outbox();
  const store::WebhookRecord w = add_webhook("http://127.0.0.1:9/hook");
  emit(2);
  const std::string id = sent.at(0).header("X-Trainyard-Event-Id");
  answer(429, "3");
  cluster.advance(2900ms);
  EXPECT_EQ(sent.size(), 1u) << "Retry-After: 3 s";
  cluster.advance(100ms);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].header("X-Trainyard-Event-Id"), id);
  // Fail until the 10 s horizon: dead-lettered, and the next event goes on.
  while (sent.back().header("X-Trainyard-Event-Id") == id && answered < sent.size()) {
    answer(500);
    cluster.advance(1s);
  }
  const auto first = deliveries(w.id).back();
  EXPECT_EQ(first.state, store::DeliveryState::dead);
  EXPECT_GT(first.attempts, 3);
  EXPECT_NE(sent.back().header("X-Trainyard-Event-Id"), id);
  answer(200);
  // Re-sent on request, with the same id.
  store::WebhookDelivery again = first;
  again.state = store::DeliveryState::retrying;
  again.attempts = 0;
  cluster.worker.write(store::Change{.webhook_deliveries = {again}}, [](const Result<void>&, store::Change&) {});
  cluster.settle();
  registry->retry_requested(w.id);
  cluster.settle();
  EXPECT_EQ(sent.back().header("X-Trainyard-Event-Id"), id);
  answer(204);
  EXPECT_EQ(deliveries(w.id).back().state, store::DeliveryState::delivered);
}

TEST_F(OutboxTest, AStormIsFoldedAndNothingIsDropped) {
  start_outbox();
  add_webhook("http://127.0.0.1:9/hook");
  emit(30, "job.succeeded");
  for (int i = 0; i < 4; ++i) answer(200);
  EXPECT_EQ(sent.size(), 4u) << "the last message of the window waits for the window's end";
  cluster.advance(1min);
  ASSERT_EQ(sent.size(), 5u);
  const Json fold = Json::parse(sent[4].request.body);
  EXPECT_EQ(fold["type"], "webhook.folded");
  EXPECT_EQ(fold["count"], 26);
  EXPECT_EQ(sent[4].header("X-Trainyard-Event-Id"), "5-30");
  answer(200);
  EXPECT_EQ(cluster.memory.load().webhooks.at(0).cursor_seq, 30);
}

// The README's recipe sends informational events too; they never hold back a failure while the
// failure reserve lasts: it goes out at once, folded with what waited before it, in order.
TEST_F(OutboxTest, AFailureIsNotHeldBackBehindInformationalEventsOfASpentBudget) {
  options.storm.failure_reserve = 1;
  start_outbox();
  add_webhook("http://127.0.0.1:9/hook");
  emit(10, "job.succeeded");
  for (int i = 0; i < 4; ++i) answer(200);
  EXPECT_EQ(sent.size(), 4u) << "the budget is spent: the rest wait for the window's end";
  emit(1, "job.failed");
  cluster.advance(options.poll_interval);
  ASSERT_EQ(sent.size(), 5u) << "the failure went out at once, not at the window's end";
  const Json fold = Json::parse(sent[4].request.body);
  EXPECT_EQ(fold["type"], "webhook.folded");
  EXPECT_EQ(fold["count"], 7) << "the six that waited and the failure";
  EXPECT_EQ(sent[4].header("X-Trainyard-Event-Id"), "5-11");
  EXPECT_TRUE(fold["message"].get<std::string>().starts_with("1 more job.failed; 6 more job.succeeded")) << fold.dump();
  answer(200);
  // The reserve is spent too: the next failure waits for the window as everything else does.
  emit(1, "job.failed");
  cluster.advance(options.poll_interval);
  EXPECT_EQ(sent.size(), 5u);
  cluster.advance(1min);
  ASSERT_EQ(sent.size(), 6u);
  answer(200);
  EXPECT_EQ(cluster.memory.load().webhooks.at(0).cursor_seq, 12);
}

TEST_F(OutboxTest, ARestartResumesTheDeliveryUnderWayWithItsAge) {
  start_outbox();
  const store::WebhookRecord w = add_webhook("http://127.0.0.1:9/hook");
  emit(2);
  answer(500);  // recorded as pending with one attempt
  outbox.reset();  // the daemon dies; the retry timer's lane is stopped
  registry.emplace(cluster.memory.load().webhooks, cluster.memory.load().max_webhook_id);
  cluster.advance(2s);
  const std::size_t before = sent.size();
  start_outbox();
  ASSERT_EQ(sent.size(), before + 1);
  EXPECT_EQ(sent.back().header("X-Trainyard-Event-Id"), sent.front().header("X-Trainyard-Event-Id"));
  answered = sent.size() - 1;
  answer(200);
  EXPECT_EQ(deliveries(w.id).front().attempts, 2);
  ASSERT_EQ(sent.size(), before + 2);  // then the second event
  answer(200);
  EXPECT_EQ(deliveries(w.id).size(), 2u);
}

// Issue 53: an event whose change waits for the store reaches no webhook before it is stored, and
// once it is, each reaches it once and in order.
TEST_F(OutboxTest, EventsThatWaitForTheStoreAreSentOnlyOnceStoredEachOnceInOrder) {
  start_outbox();
  const store::WebhookRecord w = add_webhook("http://127.0.0.1:9/hook", {"job.failed"});
  std::vector<JobId> failing;
  for (const std::string node : {"n1", "n2"}) {
    cluster.connect(node);
    failing.push_back(cluster.submit(command_spec(1)).id);
    cluster.started(node, cluster.agents.at(node)->launches().at(0).attempt_id);
  }
  cluster.store.fail_commits(true);
  for (const std::string node : {"n1", "n2"}) cluster.exited(node, cluster.agents.at(node)->launches().at(0).attempt_id, 1);
  cluster.advance(1s);
  EXPECT_TRUE(cluster.jobs.changes_wait_for_store());
  EXPECT_TRUE(sent.empty()) << "an event not stored was sent";

  cluster.store.fail_commits(false);
  cluster.tick_until_stored();
  cluster.advance(options.poll_interval);
  for (const JobId job : failing) {
    ASSERT_EQ(sent.size(), answered + 1) << "job " << job << "'s failure was not sent";
    EXPECT_EQ(Json::parse(sent[answered].request.body)["job"], job);
    answer(200);
  }
  cluster.advance(2s);
  EXPECT_EQ(sent.size(), failing.size()) << "an event was sent twice";
  EXPECT_EQ(deliveries(w.id).size(), failing.size());
}

TEST_F(OutboxTest, AReceiverThatNeverAnswersDelaysOnlyItsOwnWebhook) {
  start_outbox();
  add_webhook("http://10.0.0.1:9/dead");
  add_webhook("http://127.0.0.1:9/healthy");
  emit(3);
  // The dead receiver holds one request forever; the healthy one gets all three meanwhile.
  int healthy = 0;
  for (int round = 0; round < 10; ++round) {
    for (std::size_t i = 0; i < sent.size(); ++i) {
      if (sent[i].request.host == "127.0.0.1" && sent[i].answer) {
        auto answer_fn = std::exchange(sent[i].answer, nullptr);
        net::OutboundResponse ok;
        ok.status = 200;
        answer_fn(ok);
        ++healthy;
        cluster.settle();
      }
    }
  }
  EXPECT_EQ(healthy, 3);
}

}  // namespace
}  // namespace trainyard::daemon::testing
