// The store's writes failing for a while (issue 53): the daemon's own changes wait and are stored in
// order once it writes again, each acted on once and only then; requests that would change anything
// are refused meanwhile, reads go on, /healthz says degraded and why, GET /v1/cluster since when and
// the store's words (the dashboard's banner), /metrics counts the failures,
// and an event says when writes succeed again.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/daemon_metrics.h"
#include "daemon/store_outage.h"
#include "tests/unit/daemon/accelerator_reports.h"
#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

TEST(StoreOutage, OpensAtTheFirstFailureAndSaysHowLongItLastedWhenACommitSucceeds) {
  StoreOutage outage;
  const MonoTime start{};
  EXPECT_FALSE(outage.commit_succeeded(start)) << "no outage to end";
  outage.commit_failed(test_epoch(), start, "database or disk is full");
  outage.commit_failed(test_epoch() + std::chrono::seconds(5), start + std::chrono::seconds(5), "disk I/O error");
  EXPECT_EQ(outage.problem(), "store writes failing since " + format_time(test_epoch()) + ": disk I/O error");
  ASSERT_TRUE(outage.failing());
  EXPECT_EQ(outage.failing()->since, test_epoch());
  EXPECT_EQ(outage.failing()->error, "disk I/O error");
  EXPECT_EQ(outage.commit_succeeded(start + std::chrono::seconds(12)), Millis(12'000));
  EXPECT_FALSE(outage.problem());
  EXPECT_FALSE(outage.failing());
  EXPECT_FALSE(outage.commit_succeeded(start + std::chrono::seconds(13)));
}

class StoreOutageTest : public ApiTest {
 protected:
  StoreOutageTest() {
    cluster.jobs.set_metrics(&metrics);
    api.set_metrics_exposition([this] { return metrics.render(); }, true);
  }
  ~StoreOutageTest() override { cluster.jobs.set_metrics(nullptr); }

  std::int64_t seq_of(const std::string& kind) {
    const auto events = cluster.events_of_kind(kind);
    EXPECT_EQ(events.size(), 1u) << kind;
    return events.empty() ? -1 : events.front().seq;
  }
  std::size_t launches_of(JobId job) {
    std::size_t n = 0;
    for (const auto& [node, list] : cluster.launches()) {
      for (const LaunchMsg& l : list) n += l.job_id == job ? 1 : 0;
    }
    return n;
  }

  DaemonMetrics metrics;
};

TEST_F(StoreOutageTest, TheDaemonsOwnChangesWaitAndAreStoredInOrderAndActedOnOnce) {
  cluster.connect("n1", 8);
  cluster.connect("n2", 8);
  const Job job = cluster.submit(command_spec(1, 2));
  const LaunchMsg first = cluster.launches().begin()->second.front();
  const std::string node = cluster.launches().begin()->first;
  const std::string other = node == "n1" ? "n2" : "n1";
  cluster.started(node, first.attempt_id);

  cluster.store.fail_commits(true);
  cluster.exited(node, first.attempt_id, 1);  // the job's attempt ends: retried, once stored
  cluster.advance(Millis(3000));
  cluster.heartbeat(node);
  cluster.advance(Millis(3000));
  cluster.jobs.tick();  // the other node is silent past the node timeout: DOWN
  cluster.settle();
  EXPECT_TRUE(cluster.jobs.changes_wait_for_store());
  EXPECT_EQ(cluster.memory.job(job.id)->state, JobState::running) << "nothing of the attempt's end is stored";
  EXPECT_EQ(cluster.memory.node(other)->state, NodeState::healthy);
  cluster.advance(Millis(5000));  // past the retry's backoff
  EXPECT_EQ(launches_of(job.id), 1u) << "the retry was acted on before its change was stored";

  // Meanwhile: changes refused, reads answered, /healthz degraded with the store's words, failures counted.
  const Reply submit = call("POST", "/v1/jobs", kAlice, kJobBody);
  EXPECT_EQ(submit.status, 503);
  EXPECT_THAT(submit.error_message(), HasSubstr("nothing was changed"));
  EXPECT_EQ(call("GET", "/v1/jobs/" + std::to_string(job.id), kAlice).status, 200);
  const Reply health = call("GET", "/healthz", "");
  EXPECT_EQ(health.status, 503);
  EXPECT_EQ(health.body["status"], "degraded");
  EXPECT_THAT(health.body["store"].get<std::string>(), HasSubstr("store writes failing since "));
  EXPECT_THAT(health.body["store"].get<std::string>(), HasSubstr("disk on fire (injected)"));
  EXPECT_THAT(call("GET", "/metrics", "").text, ::testing::ContainsRegex("trainyard_store_commit_failures_total [1-9]"));
  const Reply condition = call("GET", "/v1/cluster", kAlice);
  EXPECT_EQ(condition.status, 200);
  EXPECT_THAT(condition.body["store_problem"]["error"].get<std::string>(), HasSubstr("disk on fire (injected)"));
  EXPECT_TRUE(condition.body["store_problem"].contains("since")) << condition.body.dump();

  cluster.store.fail_commits(false);
  cluster.tick_until_stored();
  cluster.advance(Millis(5000));  // the retry's backoff, from the stored end
  cluster.jobs.tick();
  cluster.settle();
  EXPECT_EQ(cluster.stored_attempts(job.id).front().state, AttemptState::failed);
  EXPECT_EQ(cluster.memory.node(other)->state, NodeState::down);
  EXPECT_LT(seq_of("job.retrying"), seq_of("node.down")) << "stored in the order they were made";
  EXPECT_LT(seq_of("node.down"), seq_of("store.recovered"));
  EXPECT_THAT(cluster.events_of_kind("store.recovered").front().message, HasSubstr("store writes succeed again after "));
  EXPECT_EQ(launches_of(job.id), 2u) << "the retry launched once, after its change was stored";
  EXPECT_EQ(call("GET", "/healthz", "").status, 200);
  EXPECT_EQ(call("GET", "/v1/cluster", kAlice).body, Json::object()) << "no store_problem once it writes";
  EXPECT_EQ(call("POST", "/v1/jobs", kAlice, kJobBody).status, 201);
}

TEST_F(StoreOutageTest, AHealthVerdictWaitsForTheStoreAndTheNodeTakesWorkOnlyOnceItIsStored) {
  cluster.connect("n1", 8);
  HealthCheckRequest request;
  request.kind = HealthCheckKind::on_demand;
  request.nodes = {"n1"};
  request.collective = false;
  const std::int64_t check = cluster.jobs.start_health_check(request);
  cluster.settle();
  const auto tasks = cluster.agents.at("n1")->all<HealthCheckMsg>();
  ASSERT_EQ(tasks.size(), 1u);
  const Job job = cluster.submit(command_spec(1));
  EXPECT_EQ(launches_of(job.id), 0u) << "a node under test takes no work";

  cluster.store.fail_commits(true);
  cluster.send("n1", HealthResultMsg{tasks.front().task_id, passing_report(), ""});
  cluster.advance(Millis(1000));  // less than the node timeout: it stays up without heartbeats
  cluster.jobs.tick();
  cluster.settle();
  EXPECT_TRUE(cluster.jobs.changes_wait_for_store());
  EXPECT_FALSE(cluster.memory.health_check(check)) << "the verdict was stored while the store failed";
  EXPECT_EQ(launches_of(job.id), 0u) << "work was placed on the strength of a verdict not stored";

  cluster.store.fail_commits(false);
  cluster.tick_until_stored();
  EXPECT_TRUE(cluster.memory.health_check(check));
  EXPECT_LT(seq_of("healthcheck.finished"), seq_of("store.recovered"));
  EXPECT_EQ(launches_of(job.id), 1u) << "the node took the job once, after its verdict was stored";
}

}  // namespace
}  // namespace trainyard::daemon::testing
