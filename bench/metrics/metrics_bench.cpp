// Scrape cost of GET /metrics (target <= 50 ms) with 2,000 nodes of 32 cores and 100,000
// active jobs in 50 shares (2,000 running, one per node, and 98,000 pending), restored into a job
// manager as the daemon restores its view at start-up. Every node's agent then connects and sends
// a heartbeat with its work and checkpoint filesystems and its rank's log bytes (the per-node disk
// series and the per-share storage series). Plus recorded families with realistic label sets (HTTP
// routes by status, failure classes, health verdicts) and the families the daemon registers beside
// DaemonMetrics (SSE clients, webhook deliveries). Prints p50/p99/max of rendering the whole
// exposition, its size and how many families and series it holds; `--print` prints it too.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/daemon_metrics.h"
#include "daemon/nodes/health_checks.h"
#include "daemon/job_manager.h"
#include "tests/support/fake_timers.h"
#include "tests/support/in_memory_store.h"

namespace {

using namespace trainyard;
using namespace trainyard::daemon;
using Clock = std::chrono::steady_clock;

constexpr int kNodes = 2000;
constexpr int kCores = 32;
constexpr int kShares = 50;
constexpr int kJobs = 100'000;

// An agent connection that nobody reads: the bench renders, it does not talk back.
class SilentChannel final : public AgentChannel {
 public:
  void send(const DaemonMessage&) override {}
  void disconnect(const std::string&) override {}
};

// `prefix + std::to_string(n)` trips g++ 12's false -Wrestrict at -O3 (GCC bug 105329).
std::string numbered(const char* prefix, int n) {
  std::string name = prefix;
  name += std::to_string(n);
  return name;
}

store::LoadedState cluster_state(TimePoint now) {
  store::LoadedState state;
  for (int n = 0; n < kNodes; ++n) {
    Node node;
    node.name = numbered("node-", n);
    node.cores = kCores;
    node.state = n % 100 == 0 ? NodeState::drained : NodeState::healthy;
    state.nodes.push_back(node);
  }
  for (int j = 1; j <= kJobs; ++j) {
    Job job;
    job.id = j;
    job.user = numbered("user-", j % 200);
    job.spec.name = numbered("job-", j);
    job.spec.share = numbered("share-", j % kShares);
    job.spec.nodes = 1;
    job.submitted_at = now - std::chrono::seconds(kJobs - j);
    if (j <= kNodes) {
      job.state = JobState::running;
      Attempt attempt;
      attempt.id = j;
      attempt.job_id = j;
      attempt.number = 1;
      attempt.nodes = {numbered("node-", j - 1)};
      attempt.cores_per_node = kCores;
      attempt.state = AttemptState::running;
      attempt.created_at = attempt.started_at.emplace(now - std::chrono::seconds(60));
      state.active_attempts.push_back(attempt);
    } else {
      job.state = JobState::pending;
    }
    state.active_jobs.push_back(job);
  }
  state.max_job_id = kJobs;
  state.max_attempt_id = kNodes;
  return state;
}

// Each node's agent says hello with the attempt it runs (so it is welcomed without a registration
// check), then heartbeats its filesystems and its rank's log size, as a live fleet does.
void connect_agents(JobManager& jobs) {
  for (int n = 0; n < kNodes; ++n) {
    const AttemptReport report{.attempt_id = n + 1, .job_id = n + 1, .step = 100, .log_bytes = 4'000'000 + n};
    HelloMsg hello;
    hello.name = numbered("node-", n);
    hello.cores = kCores;
    hello.attempts = {report};
    auto channel = std::make_shared<SilentChannel>();
    if (const Result<void> welcomed = jobs.agent_hello(hello, channel); !welcomed) {
      std::fprintf(stderr, "metrics_bench: %s refused: %s\n", hello.name.c_str(), welcomed.error().message.c_str());
      std::exit(1);
    }
    const std::vector<DiskSpace> disks = {{"work", 800'000 - n, 1'000'000}, {"checkpoint", 3'000'000 - n, 4'000'000}};
    jobs.agent_message(hello.name, channel.get(), HeartbeatMsg{0, {report}, disks});
  }
}

// The families the daemon registers beside DaemonMetrics (daemon.cpp: requests in flight and SSE
// clients; webhook_outbox.cpp: deliveries by result and their latency), with a daemon's series.
void add_daemon_families(prom::Registry& registry) {
  registry.add_collector([](prom::TextWriter& out) {
    out.gauge("trainyard_http_requests_in_flight", "HTTP requests read and not yet answered.", {}, {{{}, 3}});
    out.gauge("trainyard_sse_clients", "Clients reading GET /v1/events/stream.", {}, {{{}, 40}});
  });
  prom::Counter& deliveries = registry.counter(
      "trainyard_webhook_deliveries_total",
      "Webhook delivery attempts by result: delivered, failed (to be retried) or dead.", {"result"});
  prom::Histogram& delivery_seconds =
      registry.histogram("trainyard_webhook_delivery_seconds", "Time from an event to its delivery to a webhook.",
                         {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600});
  for (const char* result : {"delivered", "failed", "dead"}) deliveries.inc({result});
  for (int i = 0; i < 1000; ++i) delivery_seconds.observe(0.01 * (i % 200));
}

void record_events(DaemonMetrics& metrics, TimePoint now) {
  const char* routes[] = {"/v1/jobs", "/v1/jobs/{id}", "/v1/jobs/{id}/logs", "/v1/nodes", "/v1/nodes/{name}", "/metrics"};
  for (const char* route : routes) {
    for (int status : {200, 201, 400, 401, 403, 404, 429}) metrics.http_request("GET", route, status, 0.003);
  }
  for (const char* cls : {"user_error", "node_lost", "stuck", "oom", "nan_loss", "timeout"}) {
    metrics.attempt_failed(FailureClass{cls, "", false}, NextStep::retry, "team-a");
  }
  for (int i = 0; i < 1000; ++i) {
    metrics.store_commit(0.002, static_cast<std::size_t>(i % 300));
    metrics.scheduling_pass(std::chrono::microseconds(800));
  }
  // Jobs ended in every final state in every share, and attempts that reached RUNNING.
  for (int s = 0; s < kShares; ++s) {
    for (const JobState state : {JobState::succeeded, JobState::failed, JobState::cancelled}) {
      Job job;
      job.id = kJobs + 1;
      job.state = state;
      job.spec.share = numbered("share-", s);
      metrics.job_ended(job);
    }
  }
  Job started;
  started.submitted_at = now - std::chrono::seconds(30);
  Attempt first;
  first.number = 1;
  for (int i = 0; i < 100; ++i) metrics.attempt_running(started, first, now);
  // Health verdicts of each kind of check that runs, healthy and not.
  for (const HealthCheckKind kind : {HealthCheckKind::registration, HealthCheckKind::preflight, HealthCheckKind::periodic,
                                     HealthCheckKind::undrain, HealthCheckKind::warm_spare}) {
    HealthCheckResult result;
    result.request.kind = kind;
    result.verdicts = {{"node-1", NodeState::healthy, ""}, {"node-2", NodeState::suspect, "slow"},
                       {"node-3", NodeState::unhealthy, "bad core"}};
    metrics.health_check_finished(result);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 50;
  bool print = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    if (std::strcmp(argv[i], "--print") == 0) print = true;
  }
  spdlog::set_level(spdlog::level::warn);  // one "agent_connected" line per node would bury the figures
  const TimePoint now = from_unix_ms(1'800'000'000'000);
  ManualTimeSource clock(now);
  InMemoryStore store;
  StoreWorker worker(store, [](StoreWorker::Continuation) {});
  FileWorker files([](FileWorker::Continuation) {});
  FakeTimers timers(clock);  // never advanced: the restored view is only read
  scheduler::Scheduler scheduler{scheduler::Config{}};
  JobManagerConfig config;
  config.checkpoint_root = "";
  JobManager jobs(worker, files, clock, timers, config, scheduler);
  DaemonMetrics metrics;
  jobs.set_metrics(&metrics);
  metrics.watch(jobs, clock);
  jobs.restore(cluster_state(now));
  connect_agents(jobs);
  record_events(metrics, now);
  add_daemon_families(metrics.registry());

  std::vector<double> ms;
  std::string text;
  for (int r = 0; r < rounds; ++r) {
    const auto began = Clock::now();
    text = metrics.render();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - began).count());
  }
  std::sort(ms.begin(), ms.end());
  auto at = [&ms](double q) { return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ms.size())))]; };
  std::printf("metrics_bench: %d nodes x %d cores (2 filesystems each), %d active jobs (%d running) in %d shares\n",
              kNodes, kCores, kJobs, kNodes, kShares);
  std::printf("scrape: rounds=%d p50=%.3f ms  p99=%.3f ms  max=%.3f ms  size=%zu bytes (target <= 50 ms)\n", rounds,
              at(0.50), at(0.99), ms.back(), text.size());
  std::size_t families = 0;
  std::size_t series = 0;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    const std::string_view line(text.data() + begin, end - begin);
    if (line.starts_with("# TYPE ")) ++families;
    if (!line.empty() && !line.starts_with('#')) ++series;
    begin = end + 1;
  }
  std::printf("exposition: %zu families, %zu series\n", families, series);
  if (print) std::fputs(text.c_str(), stdout);
  return 0;
}
