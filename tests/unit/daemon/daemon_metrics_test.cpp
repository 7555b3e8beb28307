// The daemon's metrics over a job manager with fake agents and time: gauges from live state, and
// the hooks where events happen.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/daemon_metrics.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct MeteredCluster {
  MeteredCluster() {
    c.jobs.set_metrics(&metrics);
    metrics.watch(c.jobs, c.clock);
  }
  AttemptId attempt_of(JobId job) {
    const auto attempts = c.stored_attempts(job);
    EXPECT_FALSE(attempts.empty()) << "job " << job << " was not placed";
    return attempts.empty() ? 0 : attempts.back().id;
  }

  DaemonMetrics metrics;  // outlives the cluster, whose job manager records into it
  Cluster c;
};

JobSpec spec_in(const std::string& share, int nodes, const std::string& name = "train") {
  JobSpec spec = command_spec(nodes);
  spec.share = share;
  spec.name = name;
  spec.wait_for_capacity = true;
  return spec;
}

TEST(DaemonMetrics, GaugesFollowLiveJobsQueuesAndNodes) {
  MeteredCluster m;
  m.c.connect("n1");
  m.c.connect("n2");
  const Job running = m.c.submit(spec_in("vision", 1));
  m.c.started(m.c.nodes_of(m.attempt_of(running.id)).at(0), m.attempt_of(running.id));
  m.c.submit(spec_in("speech", 3));  // wider than the cluster: waits
  m.c.advance(std::chrono::seconds(30));
  m.c.heartbeat("n2");

  const std::string text = m.metrics.render();
  EXPECT_THAT(text, HasSubstr("trainyard_jobs{state=\"RUNNING\",share=\"vision\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_jobs{state=\"PENDING\",share=\"speech\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_queue_depth{share=\"speech\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_queue_oldest_pending_age_seconds{share=\"speech\"} 30\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_nodes{state=\"HEALTHY\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_nodes{state=\"DOWN\"} 0\n"));
  // Two 8-core nodes, one of them holding the running job's rank (a whole node).
  EXPECT_THAT(text, HasSubstr("trainyard_cores{state=\"HEALTHY\"} 16\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_cores{state=\"UNHEALTHY\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_cores_allocated{state=\"HEALTHY\"} 8\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_cores_allocated{state=\"DOWN\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_agents_connected 2\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_node_heartbeat_age_seconds{node=\"n2\"} 0\n"));
  // Per node: the state it is in (1) beside the others (0), its cores and those attempts hold.
  EXPECT_THAT(text, HasSubstr("trainyard_node_state{node=\"n1\",state=\"HEALTHY\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_node_state{node=\"n1\",state=\"UNHEALTHY\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_node_cores{node=\"n2\"} 8\n"));
  const std::string busy = m.c.nodes_of(m.attempt_of(running.id)).at(0);
  const std::string idle = busy == "n1" ? "n2" : "n1";
  EXPECT_THAT(text, HasSubstr("trainyard_node_cores_allocated{node=\"" + busy + "\"} 8\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_node_cores_allocated{node=\"" + idle + "\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_submit_to_running_seconds_count 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("trainyard_scheduling_pass_duration_seconds_count 0\n")));
}

TEST(DaemonMetrics, ARetriedFailureCountsItsClassAndTheRetryAndTheEndCountsOnce) {
  MeteredCluster m;
  m.c.connect("n1");
  JobSpec spec = spec_in("vision", 1);
  spec.retry.attempts = 2;
  const Job job = m.c.submit(spec);
  AttemptId first = m.attempt_of(job.id);
  m.c.started("n1", first);
  m.c.exited("n1", first, 1);
  m.c.advance(Millis(2000));  // the retry's backoff
  m.c.heartbeat("n1");
  m.c.jobs.tick();
  m.c.settle();
  const AttemptId second = m.attempt_of(job.id);
  ASSERT_NE(second, first);
  m.c.started("n1", second);
  m.c.exited("n1", second, 1);

  const std::string text = m.metrics.render();
  EXPECT_THAT(text, HasSubstr("infrastructure=\"false\",share=\"vision\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_retries_total{kind=\"job\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_jobs_ended_total{state=\"FAILED\",share=\"vision\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_submit_to_running_seconds_count 1\n")) << "only the first attempt counts";
}

TEST(DaemonMetrics, GoodputOfEndedJobsIsReadFromTheStoreInOneGo) {
  MeteredCluster m;
  m.c.connect("n1", 8);
  const Job job = m.c.submit(spec_in("vision", 1));
  const AttemptId attempt = m.attempt_of(job.id);
  m.c.started("n1", attempt);
  m.c.advance(std::chrono::seconds(100));
  m.c.exited("n1", attempt, 0);
  m.metrics.account_goodput(m.c.worker, m.c.clock.system_now());
  m.c.settle();
  const std::string text = m.metrics.render();
  // 8 cores held for 100 s of running (the start took no time on this clock), and no step reported:
  // all of it unmeasured, none of it called productive.
  EXPECT_THAT(text, HasSubstr("trainyard_goodput_core_seconds_total{category=\"unmeasured\"} 800\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_goodput_core_seconds_total{category=\"productive\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_jobs_ended_total{state=\"SUCCEEDED\",share=\"vision\"} 1\n"));
}

TEST(DaemonMetrics, JobNamesAndIdsNeverAppear) {
  MeteredCluster m;
  m.c.connect("n1");
  const Job job = m.c.submit(spec_in("vision", 1, "secret-project-x"));
  m.c.started("n1", m.attempt_of(job.id));
  const std::string text = m.metrics.render();
  EXPECT_THAT(text, Not(HasSubstr("secret-project-x")));
  EXPECT_THAT(text, Not(HasSubstr("job=")));
  EXPECT_THAT(text, Not(HasSubstr("user=")));
}

TEST(DaemonMetrics, StoreCommitsAndRequestsAreTimed) {
  DaemonMetrics metrics;
  metrics.store_commit(0.002, 7);
  metrics.http_request("GET", "/v1/jobs/{id}", 200, 0.004);
  metrics.http_request("GET", "/v1/jobs/{id}", 404, 0.001);
  const std::string text = metrics.render();
  EXPECT_THAT(text, HasSubstr("trainyard_store_commit_duration_seconds_count 1\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_store_commit_batch_changes_bucket{le=\"10\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_store_commit_batch_changes_bucket{le=\"5\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_http_requests_total{method=\"GET\",route=\"/v1/jobs/{id}\",status=\"404\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("trainyard_http_request_duration_seconds_count{method=\"GET\",route=\"/v1/jobs/{id}\"} 2\n"));
}

}  // namespace
}  // namespace trainyard::daemon::testing
