#pragma once
// The daemon's Prometheus metrics (GET /metrics; docs/DESIGN.md "Metrics"). Gauges are computed from the
// job manager's live view at scrape time, so they cannot drift from what they count; counters and
// histograms are recorded by one-line hooks where events happen.
//
// Labels name states, shares, classes, routes and nodes, never jobs (ids or names): a viewer's
// scrape must not show other users' job names, and a series per job would grow without bound.
//
// Threading contract: store_commit may be called from the store worker's thread; everything else
// runs on the I/O thread.
#include <chrono>
#include <string>
#include <vector>

#include "daemon/base/attempt_outcome.h"
#include "daemon/base/prometheus.h"
#include "daemon/cluster_history.h"
#include "proto/job.h"
#include "proto/time.h"

namespace trainyard::daemon {

class JobManager;
class StoreWorker;
struct HealthCheckResult;

class DaemonMetrics {
 public:
  DaemonMetrics();

  prom::Registry& registry() { return registry_; }
  std::string render() const { return registry_.render(); }
  // Adds the gauges computed from `jobs`' live view at each scrape; both must outlive this.
  void watch(const JobManager& jobs, const TimeSource& clock);

  // --- hooks ---
  void scheduling_pass(std::chrono::steady_clock::duration took);
  // The job's attempt is RUNNING; its first attempt gives the job's submit-to-running latency.
  void attempt_running(const Job& job, const Attempt& attempt, TimePoint now);
  void attempt_failed(const FailureClass& cls, NextStep next, const std::string& share);
  void health_check_finished(const HealthCheckResult& result);
  // The job reached a final state; its goodput is read from the store by the next account_goodput.
  void job_ended(const Job& job);
  void store_commit(double seconds, std::size_t changes);
  void store_commit_failed() { store_commit_failures_.inc(); }
  void http_request(const std::string& method, const std::string& route, int status, double seconds);

  // Adds the goodput of the jobs that ended since the last call (one store read for all of them).
  void account_goodput(StoreWorker& store, TimePoint now);

  // The counters the cluster's history is sampled from, as they stand.
  ActivityTotals activity_totals() const;

 private:
  prom::Registry registry_;
  prom::Histogram& scheduling_pass_seconds_;
  prom::Histogram& submit_to_running_seconds_;
  prom::Counter& jobs_ended_;
  prom::Counter& canary_runs_;
  prom::Counter& attempt_failures_;
  prom::Counter& retries_;
  prom::Counter& health_verdicts_;
  prom::Counter& goodput_core_seconds_;
  prom::Histogram& store_commit_seconds_;
  prom::Histogram& store_commit_changes_;
  prom::Counter& store_commit_failures_;
  prom::Counter& http_requests_;
  prom::Histogram& http_request_seconds_;
  prom::Counter& attempts_running_;
  std::vector<JobId> ended_jobs_;  // whose goodput is not yet accounted
};

// The live-state families: jobs by state and share, queue depth and oldest pending age by share,
// storage bytes by share, nodes by state, agents connected, heartbeat age and free disk by node.
void write_live_state(prom::TextWriter& out, const JobManager& jobs, const TimeSource& clock);

}  // namespace trainyard::daemon
