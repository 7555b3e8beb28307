#include "daemon/daemon_metrics.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "daemon/base/store_worker.h"
#include "daemon/canary.h"
#include "daemon/telemetry/goodput.h"
#include "daemon/nodes/health_checks.h"
#include "daemon/job_manager.h"
#include "proto/seconds.h"

namespace trainyard::daemon {
namespace {

const std::vector<double> kSchedulingPassBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                   0.1,    0.25,  0.5,    1,     2.5,  5};
const std::vector<double> kSubmitToRunningBounds = {0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200,
                                                    21600, 86400};
const std::vector<double> kCommitBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
const std::vector<double> kBatchBounds = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000};
const std::vector<double> kHttpBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

// "unmeasured" is time no step was reported in: goodput is "productive" over all the others.
constexpr const char* kGoodputCategories[] = {"productive", "preflight", "restart",    "checkpoint",
                                              "redone",     "stalled",   "unmeasured", "other"};

const char* suites_of(const HealthCheckRequest& r) {
  if (r.accelerator && r.collective) return "accelerator+collective";
  return r.accelerator ? "accelerator" : "collective";
}

}  // namespace

DaemonMetrics::DaemonMetrics()
    : scheduling_pass_seconds_(registry_.histogram("trainyard_scheduling_pass_duration_seconds",
                                                   "Time one scheduling pass took (scheduler and starting its placements).",
                                                   kSchedulingPassBounds)),
      submit_to_running_seconds_(registry_.histogram(
          "trainyard_submit_to_running_seconds",
          "Time from a job's submission until its first attempt was RUNNING (retries are not counted).",
          kSubmitToRunningBounds)),
      jobs_ended_(registry_.counter("trainyard_jobs_ended_total", "Jobs that reached a final state, since the daemon started.",
                                    {"state", "share"})),
      canary_runs_(registry_.counter("trainyard_canary_runs_total", "Canary jobs that ended, by final state.", {"result"})),
      attempt_failures_(registry_.counter("trainyard_attempt_failures_total",
                                          "Attempts that failed, by failure class, whether the infrastructure was at "
                                          "fault, and the job's share.",
                                          {"class", "infrastructure", "share"})),
      retries_(registry_.counter("trainyard_retries_total",
                                 "Failed attempts retried: kind job counts against the job's retry.attempts, kind "
                                 "infrastructure against --max-infra-retries.",
                                 {"kind"})),
      health_verdicts_(registry_.counter("trainyard_health_verdicts_total",
                                         "Node verdicts of finished health checks, by the check's kind, the suites it ran "
                                         "and the verdict.",
                                         {"kind", "suite", "verdict"})),
      goodput_core_seconds_(registry_.counter(
          "trainyard_goodput_core_seconds_total",
          "Allocated core-seconds of ended jobs by where they went (productive, preflight, restart, checkpoint, redone, "
          "stalled, unmeasured, other); goodput is productive over the sum of all but unmeasured (no step reported).",
          {"category"})),
      store_commit_seconds_(registry_.histogram("trainyard_store_commit_duration_seconds",
                                                "Time one store transaction (a group commit) took.", kCommitBounds)),
      store_commit_changes_(registry_.histogram("trainyard_store_commit_batch_changes",
                                                "Changes written together in one store transaction.", kBatchBounds)),
      store_commit_failures_(registry_.counter("trainyard_store_commit_failures_total",
                                               "Store transactions that failed to commit (a full disk, a database gone).")),
      http_requests_(registry_.counter("trainyard_http_requests_total", "HTTP requests answered, by route and status.",
                                       {"method", "route", "status"})),
      http_request_seconds_(registry_.histogram("trainyard_http_request_duration_seconds",
                                                "Time from a request's arrival to its answer, by route.", kHttpBounds,
                                                {"method", "route"})),
      attempts_running_(registry_.counter("trainyard_attempts_running_total",
                                          "Attempts that reached RUNNING (every rank started), retries included.")) {
  // Series that alerts take increase() of exist from the start: a series born at 1 shows no increase.
  for (const char* result : {"SUCCEEDED", "FAILED", "CANCELLED"}) canary_runs_.inc({result}, 0);
  for (const char* kind : {"job", "infrastructure"}) retries_.inc({kind}, 0);
  store_commit_failures_.inc({}, 0);
  for (const char* category : kGoodputCategories) goodput_core_seconds_.inc({category}, 0);
}

void DaemonMetrics::watch(const JobManager& jobs, const TimeSource& clock) {
  registry_.add_collector([&jobs, &clock](prom::TextWriter& out) { write_live_state(out, jobs, clock); });
}

void DaemonMetrics::scheduling_pass(std::chrono::steady_clock::duration took) {
  scheduling_pass_seconds_.observe(in_seconds(took));
}

void DaemonMetrics::attempt_running(const Job& job, const Attempt& attempt, TimePoint now) {
  attempts_running_.inc();
  if (attempt.number == 1) submit_to_running_seconds_.observe(seconds_between(job.submitted_at, now));
}

void DaemonMetrics::attempt_failed(const FailureClass& cls, NextStep next, const std::string& share) {
  attempt_failures_.inc({cls.name, cls.infrastructure ? "true" : "false", share});
  if (next == NextStep::retry) retries_.inc({"job"});
  if (next == NextStep::retry_infrastructure) retries_.inc({"infrastructure"});
}

void DaemonMetrics::health_check_finished(const HealthCheckResult& result) {
  const std::string kind = to_string(result.request.kind);
  for (const auto& verdict : result.verdicts) {
    health_verdicts_.inc({kind, suites_of(result.request), to_string(verdict.state)});
  }
}

void DaemonMetrics::job_ended(const Job& job) {
  jobs_ended_.inc({to_string(job.state), job.spec.share});
  if (job.user == kCanaryUser) canary_runs_.inc({to_string(job.state)});
  if (job.attempts + job.infra_retries > 0) ended_jobs_.push_back(job.id);
}

void DaemonMetrics::store_commit(double seconds, std::size_t changes) {
  store_commit_seconds_.observe(seconds);
  store_commit_changes_.observe(static_cast<double>(changes));
}

void DaemonMetrics::http_request(const std::string& method, const std::string& route, int status, double seconds) {
  http_requests_.inc({method, route, std::to_string(status)});
  http_request_seconds_.observe(seconds, {method, route});
}

void DaemonMetrics::account_goodput(StoreWorker& store, TimePoint now) {
  if (ended_jobs_.empty()) return;
  // Counters are safe to add to from the store thread; nothing comes back to the I/O thread.
  store.read(
      [this, jobs = std::move(ended_jobs_), now](store::Store& s) {
        Goodput total;
        for (const JobId id : jobs) total += job_goodput(s.attempts_of(id), now);
        const double by_category[] = {total.productive_core_s, total.preflight_core_s, total.restart_core_s,
                                      total.checkpoint_core_s, total.redone_core_s,    total.stalled_core_s,
                                      total.unmeasured_core_s, total.other_core_s};
        for (std::size_t i = 0; i < std::size(kGoodputCategories); ++i) {
          goodput_core_seconds_.inc({kGoodputCategories[i]}, by_category[i]);
        }
        return StoreWorker::Continuation([] {});
      },
      [](const Error&) {});  // the store worker logs the failure; those jobs' goodput is not counted
  ended_jobs_.clear();
}

ActivityTotals DaemonMetrics::activity_totals() const {
  ActivityTotals totals;
  totals.started_attempts = attempts_running_.value();
  for (const auto& [labels, n] : attempt_failures_.values()) totals.failed_attempts[labels.at(0)] += n;
  for (const auto& [labels, core_s] : goodput_core_seconds_.values()) {
    if (labels.at(0) != "unmeasured") totals.ended_core_s += core_s;  // goodput's denominator: measured time
  }
  totals.productive_core_s = goodput_core_seconds_.value({"productive"});
  return totals;
}

void write_live_state(prom::TextWriter& out, const JobManager& jobs, const TimeSource& clock) {
  const TimePoint now = clock.system_now();
  // One pass over the active jobs, keyed by share without copying it: a scrape walks 100,000 jobs.
  struct ShareCounts {
    double starting = 0, running = 0, pending = 0;
    TimePoint oldest_waiting = TimePoint::max();
  };
  std::unordered_map<std::string_view, ShareCounts> shares;
  for (const auto& [id, job] : jobs.active_jobs()) {
    ShareCounts& counts = shares[job.spec.share];
    if (job.state == JobState::starting) counts.starting += 1;
    if (job.state == JobState::running) counts.running += 1;
    if (job.state != JobState::pending) continue;
    counts.pending += 1;
    // A retried job waits from the end of its backoff, not from its first submission.
    counts.oldest_waiting = std::min(counts.oldest_waiting, std::max(job.submitted_at, job.not_before.value_or(job.submitted_at)));
  }
  std::map<prom::LabelValues, double> by_state_share;
  std::map<prom::LabelValues, double> queue_depth;
  std::map<prom::LabelValues, double> oldest_pending;
  for (const auto& [share_view, counts] : shares) {
    const std::string share(share_view);
    const std::pair<const char*, double> states[] = {
        {"PENDING", counts.pending}, {"STARTING", counts.starting}, {"RUNNING", counts.running}};
    for (const auto& [state, n] : states) {
      if (n > 0) by_state_share[{state, share}] = n;
    }
    if (counts.pending == 0) continue;
    queue_depth[{share}] = counts.pending;
    oldest_pending[{share}] = seconds_between(counts.oldest_waiting, now);
  }
  out.gauge("trainyard_jobs", "Active jobs (PENDING, STARTING, RUNNING) by state and share.", {"state", "share"},
            by_state_share);
  out.gauge("trainyard_queue_depth", "PENDING jobs by share.", {"share"}, queue_depth);
  out.gauge("trainyard_queue_oldest_pending_age_seconds",
            "How long the longest-waiting PENDING job of each share has waited since it became eligible (submitted, or "
            "its retry backoff ended).",
            {"share"}, oldest_pending);

  std::map<prom::LabelValues, double> storage;
  for (const auto& [share, bytes] : jobs.storage().shares()) {
    storage[{share, "checkpoint"}] = static_cast<double>(bytes.checkpoint_bytes);
    storage[{share, "log"}] = static_cast<double>(bytes.log_bytes);
    storage[{share, "work"}] = static_cast<double>(bytes.work_bytes);
  }
  out.gauge("trainyard_share_storage_bytes", "Checkpoint, log and work-directory bytes the jobs of each share keep, by kind.",
            {"share", "kind"}, storage);

  // Every state is a series, at zero too, so a board's sums and ratios exist on an idle cluster.
  std::map<prom::LabelValues, double> nodes_by_state, cores_by_state, allocated_by_state;
  for (const NodeState s : {NodeState::healthy, NodeState::suspect, NodeState::unhealthy, NodeState::drained,
                            NodeState::down}) {
    nodes_by_state[{to_string(s)}] = 0;
    cores_by_state[{to_string(s)}] = 0;
    allocated_by_state[{to_string(s)}] = 0;
  }
  std::map<prom::LabelValues, double> heartbeat_age;
  std::map<prom::LabelValues, double> disk_free;
  // One series per node and state, 1 for the state it is in (as kube-state-metrics does): a board
  // draws a node map, and an alert holds on `trainyard_node_state{state="UNHEALTHY"} == 1` for an hour.
  std::map<prom::LabelValues, double> node_state, node_cores, node_allocated;
  double connected = 0;
  for (const NodeView& view : jobs.nodes()) {
    for (const auto& [state, unused] : nodes_by_state) {
      node_state[{view.node.name, state.front()}] = state.front() == to_string(view.node.state) ? 1 : 0;
    }
    node_cores[{view.node.name}] = view.node.cores;
    node_allocated[{view.node.name}] = view.node.cores - view.free_cores;
    nodes_by_state[{to_string(view.node.state)}] += 1;
    cores_by_state[{to_string(view.node.state)}] += view.node.cores;
    allocated_by_state[{to_string(view.node.state)}] += view.node.cores - view.free_cores;
    if (view.node.connected) connected += 1;
    if (view.node.last_heartbeat) {
      heartbeat_age[{view.node.name}] = std::chrono::duration<double>(clock.monotonic_now() - view.heard_at).count();
    }
    for (const DiskSpace& d : view.node.disks) disk_free[{view.node.name, d.role}] = static_cast<double>(d.free_mb) * 1024 * 1024;
  }
  out.gauge("trainyard_nodes", "Registered nodes by state.", {"state"}, nodes_by_state);
  out.gauge("trainyard_cores", "Cores of registered nodes, by node state (HEALTHY ones can take work).", {"state"},
            cores_by_state);
  out.gauge("trainyard_cores_allocated", "Cores held by attempts, by their node's state.", {"state"}, allocated_by_state);
  out.gauge("trainyard_agents_connected", "Agents connected over WebSocket.", {}, {{{}, connected}});
  out.gauge("trainyard_node_heartbeat_age_seconds", "Time since each node's last heartbeat.", {"node"}, heartbeat_age);
  out.gauge("trainyard_node_state", "Each node's state: 1 for the state it is in, 0 for the others.", {"node", "state"},
            node_state);
  out.gauge("trainyard_node_cores", "Each node's cores.", {"node"}, node_cores);
  out.gauge("trainyard_node_cores_allocated", "Cores held by attempts on each node.", {"node"}, node_allocated);
  out.gauge("trainyard_node_disk_free_bytes", "Free space on each node's work and checkpoint filesystems.", {"node", "filesystem"},
            disk_free);
}

}  // namespace trainyard::daemon
