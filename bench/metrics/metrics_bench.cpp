// Scrape cost of GET /metrics (issue 14, target <= 50 ms) with 2,000 nodes of 32 cores and 100,000
// active jobs in 50 shares (2,000 running, one per node, and 98,000 pending), restored into a job
// manager as the daemon restores its view at start-up, plus recorded families with realistic label
// sets (HTTP routes by status, failure classes, health verdicts). Prints p50/p99/max of rendering
// the whole exposition, and its size.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "daemon/daemon_metrics.h"
#include "daemon/job_manager.h"
#include "tests/support/in_memory_store.h"

namespace {

using namespace trainyard;
using namespace trainyard::daemon;
using Clock = std::chrono::steady_clock;

constexpr int kNodes = 2000;
constexpr int kCores = 32;
constexpr int kShares = 50;
constexpr int kJobs = 100'000;

// The bench drives no timers: the restored view is only read.
class IdleTimers final : public Timers {
 public:
  void after(Millis, std::function<void()>) override {}
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

void record_events(DaemonMetrics& metrics) {
  const char* routes[] = {"/v1/jobs", "/v1/jobs/{id}", "/v1/jobs/{id}/logs", "/v1/nodes", "/v1/nodes/{name}", "/metrics"};
  for (const char* route : routes) {
    for (int status : {200, 201, 400, 401, 403, 404, 429}) metrics.http_request("GET", route, status, 0.003);
  }
  for (const char* cls : {"user_error", "node_lost", "stuck", "oom", "nan_loss", "timeout"}) {
    metrics.attempt_failed(FailureClass{cls, "", false}, NextStep::retry);
  }
  for (int i = 0; i < 1000; ++i) {
    metrics.store_commit(0.002, static_cast<std::size_t>(i % 300));
    metrics.scheduling_pass(std::chrono::microseconds(800));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 50;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::max(1, std::atoi(argv[i + 1]));
  }
  const TimePoint now = from_unix_ms(1'800'000'000'000);
  ManualTimeSource clock(now);
  InMemoryStore store;
  StoreWorker worker(store, [](StoreWorker::Continuation) {});
  FileWorker files([](FileWorker::Continuation) {});
  IdleTimers timers;
  scheduler::Scheduler scheduler{scheduler::Config{}};
  JobManagerConfig config;
  config.checkpoint_root = "";
  JobManager jobs(worker, files, clock, timers, config, scheduler);
  DaemonMetrics metrics;
  jobs.set_metrics(&metrics);
  metrics.watch(jobs, clock);
  jobs.restore(cluster_state(now));
  record_events(metrics);

  std::vector<double> ms;
  std::size_t bytes = 0;
  for (int r = 0; r < rounds; ++r) {
    const auto began = Clock::now();
    const std::string text = metrics.render();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - began).count());
    bytes = text.size();
  }
  std::sort(ms.begin(), ms.end());
  auto at = [&ms](double q) { return ms[std::min(ms.size() - 1, static_cast<std::size_t>(q * static_cast<double>(ms.size())))]; };
  std::printf("metrics_bench: %d nodes x %d cores, %d active jobs (%d running) in %d shares\n", kNodes, kCores, kJobs,
              kNodes, kShares);
  std::printf("scrape: rounds=%d p50=%.3f ms  p99=%.3f ms  max=%.3f ms  size=%zu bytes (target <= 50 ms)\n", rounds,
              at(0.50), at(0.99), ms.back(), bytes);
  return 0;
}
