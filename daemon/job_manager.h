#pragma once
// The job state machine of docs/DESIGN.md "Jobs and the job manager" and the daemon's in-memory view of active work.
//
// Write-ahead discipline: every transition updates memory, queues its Change on the store worker,
// and acts (launches, kills, answers the API) only in the commit's completion. The store therefore
// always holds a prefix of the transitions, and nothing outside the daemon ever saw a transition
// that a crash could lose. At start-up `restore` rebuilds the view from the store.
//
// Threading contract: I/O thread only.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "daemon/attempt_end.h"
#include "daemon/policy/attempt_networks.h"
#include "daemon/attempt_table.h"
#include "daemon/base/audit.h"
#include "daemon/base/auth.h"
#include "daemon/base/failure_rules.h"
#include "daemon/base/store_worker.h"
#include "daemon/file_worker.h"
#include "daemon/nodes/health_checks.h"
#include "daemon/job_graph.h"
#include "daemon/log_fetcher.h"
#include "daemon/monitors.h"
#include "daemon/nodes/node_registry.h"
#include "daemon/own_pauses.h"
#include "daemon/pending_writes.h"
#include "daemon/provenance.h"
#include "daemon/recently_ended.h"
#include "daemon/policy/recovery.h"
#include "daemon/request_turns.h"
#include "daemon/share_table.h"
#include "daemon/telemetry/storage_usage.h"
#include "daemon/store_outage.h"
#include "daemon/unheard_stops.h"
#include "healthcheck/disk_space.h"
#include "proto/messages.h"
#include "proto/result.h"
#include "proto/time.h"
#include "proto/timers.h"
#include "scheduler/dependencies.h"
#include "scheduler/preemption.h"
#include "scheduler/scheduler.h"

namespace trainyard::daemon {

class DaemonMetrics;

struct JobManagerConfig {
  std::string daemon_version;
  Millis heartbeat_interval{5000};
  Millis node_timeout{30000};
  Millis tick{500};  // how often tick() runs: a much longer gap is the daemon's own pause (daemon/own_pauses.h)
  int kill_grace_ms = 10000;
  Millis fence_after{0};  // told to agents at welcome (daemon/policy/fence_timing.h); 0: they never fence
  std::string checkpoint_root;  // the cluster's own, under --checkpoint-root (cluster_checkpoint_root)
  std::string cluster_name;     // the store's (store::Store::cluster_name), told to agents at welcome
  int max_infra_retries = 3;
  Millis retry_backoff_base{2000};
  Millis log_fetch_timeout{5000};
  HealthCheckConfig health;
  FailureRules failure_rules = FailureRules::defaults();
  bool registration_checks = true;   // a node takes no work before it passes the accelerator suite
  bool preflight_checks = true;      // multi-node attempts of jobs with `preflight` test their nodes first
  Millis periodic_check_interval{0};  // idle nodes are re-tested this often; 0: never
  Millis first_comparison_after{0};   // their rotation starts early, once 3+ idle nodes compare (monitors.h)
  double periodic_checking_share = 0.1;  // of the idle nodes under periodic checks at once (monitors.h)
  Millis canary_interval{0};          // a canary job is submitted this often; 0: never
  int canary_nodes = 2;
  int max_array_size = kDefaultMaxArraySize;
  // MASTER_PORT of an attempt: first + its id modulo the range's size (--master-ports).
  int master_port_first = 20000;
  int master_port_last = 39999;
  // Where attempts' own networks get their addresses (--job-network); none: they share their nodes'.
  std::optional<Ipv4Network> job_network;
  scheduler::PreemptionConfig preemption;  // off by default
  healthcheck::DiskPolicy disk_policy;          // a node with less free space is SUSPECT (healthcheck/disk_space.h)
  // A running job with a storage quota has its checkpoint directory measured this often, and is
  // stopped (disk_full, its own fault) once it has stayed over its quota for storage_grace.
  Millis storage_scan_interval{10'000};
  Millis storage_grace{60'000};
  RecoveryConfig recovery;                 // disconnect grace, warm spares (daemon/policy/recovery.h)
};

// "node-1,node-2": node lists in reasons, events and logs.
std::string join_node_names(const std::vector<std::string>& names);

class JobManager {
 public:
  JobManager(StoreWorker& store, FileWorker& files, const TimeSource& clock, Timers& timers, JobManagerConfig config,
             scheduler::Scheduler& scheduler);

  void restore(const store::LoadedState& state);

  // --- API side -------------------------------------------------------------------------------
  // An accepted job: the active job (valid during the call) and its stored text (job_record).
  struct Submitted {
    const Job& job;
    std::string record;
  };
  // Refused (unavailable) when the store did not commit it. A job no registered nodes could ever
  // hold (job_fit.h), an array over --max-array-size, or a dependency on no job is refused at once
  // (invalid_input), before anything is stored.
  using SubmitDone = std::function<void(Result<Submitted> accepted)>;
  // `audit`, when given, is the caller's record of the change (daemon/base/audit.h): it is committed in
  // the change's own transaction. The same holds for cancel, set_share, drain and undrain.
  // A dependency on a job of `hidden_jobs` (one the submitter may not see) is refused as one on no job.
  void submit(JobSpec spec, std::string user, SubmitDone done, AuditOf audit = nullptr,
              const std::unordered_set<JobId>& hidden_jobs = {});
  // A canary job now (POST /v1/canaries), as the schedule would submit one; conflict when one runs
  // or no node is ready.
  void run_canary(SubmitDone done, AuditOf audit);
  // When the next canary on the schedule is due; nullopt when canaries are off.
  std::optional<TimePoint> next_canary_at() const;

  enum class CancelResult { cancelled, cancelling, not_active, not_stored };
  // Cancels an active job; `not_active` when the job is not in the active view, `not_stored` (with
  // the job as it still is) when the cancel could not be stored: then nothing changed.
  using CancelDone = std::function<void(CancelResult, std::optional<Job>)>;
  void cancel(JobId id, CancelDone done, AuditOf audit = nullptr);

  // --- Hold, release, requeue, update (job_manager_requeue.cpp) --------------------------------
  // `invalid`: the change asked for cannot be taken (an update no nodes could ever hold);
  // `not_stored`: its commit failed and nothing changed (`why` says which change).
  enum class ControlResult { done, not_active, wrong_state, forbidden, invalid, not_stored };
  struct ControlOutcome {
    ControlResult result = ControlResult::done;
    std::optional<Job> job;  // as stored, when done
    std::string why;         // when refused
    std::string field;       // when invalid: the spec's field at fault
  };
  using ControlDone = std::function<void(ControlOutcome)>;
  // A pending job is held (never scheduled) until released; `by` says whose hold it is.
  void hold(JobId id, Hold by, ControlDone done, AuditOf audit = nullptr);
  // An owner (`by` owner) may not release an admin's hold.
  void release(JobId id, Hold by, ControlDone done, AuditOf audit = nullptr);
  // Stops a starting or running job without using an attempt and queues it again; a simulated job
  // checkpoints first, a command gets SIGTERM and the grace. Answered once the intent is stored.
  void requeue_running(JobId id, ControlDone done, AuditOf audit = nullptr);
  // Replaces a pending job's spec (the caller validated it as a submission and checked who may).
  void update(JobId id, JobSpec spec, ControlDone done, AuditOf audit = nullptr);

  const Job* active_job(JobId id) const;
  // One of the jobs that ended last (daemon/recently_ended.h), for reads while the store cannot be read.
  const Job* recently_ended(JobId id) const { return recently_ended_.find(id); }
  const std::map<JobId, Job>& active_jobs() const { return active_jobs_; }
  std::optional<Attempt> active_attempt(AttemptId id) const;
  std::vector<NodeView> nodes() const;
  NodePage node_page(const NodeFilter& filter, const std::string& after, std::size_t limit) const {
    return nodes_.page(filter, after, limit);
  }
  std::optional<NodeView> node(const std::string& name) const;
  std::size_t pending_count() const;
  std::size_t pending_count(const std::string& user) const;
  const scheduler::Scheduler& scheduler() const { return scheduler_; }
  // Creates or changes a share (an admin's): stores its settings and members (nullopt: open to
  // every user), then applies them; unavailable, and nothing applied, when they could not be stored.
  void set_share(const std::string& name, const scheduler::ShareSettings& settings,
                 std::optional<std::vector<std::string>> members, std::function<void(Result<void>)> done,
                 AuditOf audit = nullptr);
  // Deletes a share no active job is in (a share made by mistake): its settings, members and
  // usage. not_found for a share the table does not have; conflict, naming a job, while one is
  // pending or running in it. `done` runs once the deletion is stored.
  void delete_share(const std::string& name, std::function<void(Result<void>)> done, AuditOf audit = nullptr);
  // Whether an admin created the share, and who may submit into it (null: every user).
  bool share_created(const std::string& name) const { return shares_.created(name); }
  const std::vector<std::string>* share_members(const std::string& name) const { return shares_.members(name); }
  // Checkpoint and log bytes by job and share (daemon/telemetry/storage_usage.h).
  const StorageUsage& storage() const { return storage_; }
  std::optional<std::int64_t> share_storage_limit_mb(const std::string& share) const;
  // Writes every share's decayed usage, so a restart keeps fair share where it was.
  void persist_usage();

  // Asks the node's agent to replace its injected faults with `specs` (validated by the caller);
  // the node lists them once the agent confirms. False when the node is not connected.
  bool set_faults(const std::string& node, std::vector<std::string> specs);

  // --- Health ---------------------------------------------------------------------------------
  // Starts a check of nodes the caller validated (registered, connected; idle for the accelerator
  // suite); node states follow its verdicts when it finishes.
  std::int64_t start_health_check(HealthCheckRequest request);
  const HealthChecks& health() const { return health_; }
  // DRAINED takes no new work; with `stop_attempts` its running attempts are stopped and retried
  // elsewhere as infrastructure failures, else they finish. `done` runs once it is stored, or with
  // unavailable, the node as it was, when it could not be.
  using DrainDone = std::function<void(Result<Node>)>;
  void drain(const std::string& node, const std::string& reason, bool stop_attempts, DrainDone done,
             AuditOf audit = nullptr);
  // Returns a node to service: a DRAINED node at once, an UNHEALTHY or SUSPECT one only by passing
  // a health check (started here; its id is in the answer). Unavailable, the node as it was, when
  // the undrain could not be stored; a check it started runs on, and its verdict counts as any other.
  struct Undrained {
    Node node;
    std::optional<std::int64_t> health_check;
  };
  using UndrainDone = std::function<void(Result<Undrained>)>;
  void undrain(const std::string& node, const std::string& by, UndrainDone done, AuditOf audit = nullptr);

  LogFetcher& logs() { return logs_; }

  // --- Agent side -----------------------------------------------------------------------------
  // Accepts the agent, or fails with why it is refused. The caller (the gateway) checked that the
  // connection's token may speak for `hello.name`; `node_credential` is the node's new secret when
  // it was just issued, for the welcome.
  Result<void> agent_hello(const HelloMsg& hello, std::shared_ptr<AgentChannel> channel,
                           const std::string& node_credential = "");
  void agent_message(const std::string& node, const AgentChannel* channel, const AgentMessage& message);
  // A closed connection: its node's ranks are lost once the disconnect grace passes without a
  // reconnect, or at once when a peer rank saw the node's data-plane connection close too.
  void agent_gone(const std::string& node, const AgentChannel* channel);
  // A node's fence keeper reports that its agent died and every process of the attempts it names
  // is gone from the node; the gateway checked that the connection holds that node's own credential.
  // Their ranks on the node are lost without waiting out the time the keeper may take: as soon as a
  // peer saw the node's data plane close or the disconnect grace is over (recovery.h). Fails
  // (invalid_input) only for another protocol version.
  Result<void> attempts_stopped(const AttemptsStoppedMsg& report);
  // The daemon is about to close every agent connection itself (shutdown): those closes lose no
  // node, since the agents reconnect to the next daemon with their attempts running.
  void closing_agent_connections() { closing_agent_connections_ = true; }

  // Periodic work: node liveness, attempt timeouts, unconfirmed ranks, scheduling. Silence during
  // a pause of the daemon itself (a late tick) is not held against nodes and ranks.
  void tick();

  // --- Arrays and dependencies (job_manager_arrays.cpp) ---------------------------------------
  // Jobs outside the active view that a submission's dependencies name, which the caller read
  // from the store: their final states (and an array's indices) are kept for the dependencies.
  void remember_jobs(const std::vector<Job>& jobs);
  // The ids a spec depends on that this manager knows nothing of: the caller reads them first.
  std::vector<JobId> unknown_dependencies(const JobSpec& spec) const;

  // Whether the store's commits fail, since when and why (/healthz, GET /v1/cluster, refusals).
  const StoreOutage& store_outage() const { return outage_; }
  // The daemon's own changes wait to be stored in order: requests that change anything are refused
  // meanwhile, so none overtakes them (pending_writes.h).
  bool changes_wait_for_store() const { return pending_.waiting(); }
  // A record of what was already done (the audit record of a health check started or of faults
  // sent): stored in order with the daemon's own changes, and tried again until it is.
  void record(store::Change change) { persist(std::move(change), nullptr); }

  // Where the event hooks record (daemon_metrics.h); none by default. It must outlive the manager.
  void set_metrics(DaemonMetrics* metrics) { metrics_ = metrics; }

 private:
  store::Change usage_change();  // every share's record with its decayed usage as of now
  // Arrays and dependencies (job_manager_arrays.cpp).
  // Fails (invalid_input) for an array over max_array_size, unknown ids and aftercorr without arrays.
  Result<void> check_array_and_dependencies(const JobSpec& spec, const std::unordered_set<JobId>& hidden_jobs) const;
  // The submitted job's drafts: one, or an array's tasks with consecutive ids.
  void add_drafts(store::Change& change, JobSpec spec, const std::string& user, TimePoint now);
  // Sets what holds a pending job back (dependencies, array limit); false when its dependencies can
  // never be met: it is then cancelled with that reason.
  bool hold_for_dependencies(const Job& job, scheduler::PendingJob& pending);
  // A job ended: its dependents are looked at again.
  void upstream_ended(const Job& job);
  void cancel_unmet(JobId id, const std::string& reason);
  // The daemon's own change: stored in order, retried until stored, acted on (`then`) once it is.
  void persist(store::Change change, std::function<void()> then);
  // Every transaction's outcome (StoreWorker::set_outcome_observer): opens and ends an outage.
  void note_commit(const Result<void>& written);
  // A change an API caller asked for: `then` acts and answers once it is stored; when the commit
  // fails, `not_stored` puts memory back as it was before the request and answers unavailable. Never
  // retried: the caller was told that nothing changed.
  void persist_requested(store::Change change, std::function<void()> then, std::function<void()> not_stored);
  // Puts back what a request changed on a job (hold, spec, cancel, stop) when its change could not
  // be stored; a pending job is queued again (the request took it off the queue).
  void put_back(const Job& before);
  // The requests above, each in its turn for its job, node or share (request_turns.h).
  void set_share_in_turn(const std::string& name, const scheduler::ShareSettings& settings,
                         std::optional<std::vector<std::string>> members, std::function<void(Result<void>)> done,
                         AuditOf audit);
  void delete_share_in_turn(const std::string& name, std::function<void(Result<void>)> done, AuditOf audit);
  void cancel_in_turn(JobId id, CancelDone done, AuditOf audit);
  void hold_in_turn(JobId id, Hold by, ControlDone done, AuditOf audit);
  void release_in_turn(JobId id, Hold by, ControlDone done, AuditOf audit);
  void requeue_running_in_turn(JobId id, ControlDone done, AuditOf audit);
  void update_in_turn(JobId id, JobSpec spec, ControlDone done, AuditOf audit);
  void drain_in_turn(const std::string& node, const std::string& reason, bool stop_attempts, DrainDone done, AuditOf audit);
  void undrain_in_turn(const std::string& node, const std::string& by, UndrainDone done, AuditOf audit);
  void request_schedule();
  void schedule();
  void start_attempt(Job& job, const scheduler::Start& start);
  void requeue(const Job& job);
  // The retry backoff that held `id` until `until` is over (if the job still waits for it).
  void end_backoff(JobId id, TimePoint until);
  void launch(AttemptId id);
  // False when the node's agent is not connected.
  bool send_to(const std::string& node, const DaemonMessage& message);

  void on_started(const std::string& node, const AttemptStartedMsg& msg);
  void on_exited(const std::string& node, const AttemptExitedMsg& msg);
  void on_heartbeat(const std::string& node, const HeartbeatMsg& msg);
  void on_metrics(const std::string& node, const MetricsMsg& msg);
  void on_faults(const std::string& node, const FaultsMsg& msg);
  // A rank whose checkpoint writes fail trains on, and a retry would lose what it trained since the
  // last one written: its attempt's first failure is an event people act on, later ones a count.
  void note_checkpoint_failures(ActiveAttempt& attempt, int rank, const CheckpointFailures& reported);
  // Storage (job_manager_storage.cpp): the node's free space and its ranks' log bytes; a job that
  // goes over its quota has its checkpoints measured and pruned.
  void note_storage(const std::string& node, const HeartbeatMsg& msg);
  struct StorageScan;
  // Measures the job's checkpoint directory and prunes its oldest checkpoints if it is over quota.
  void check_storage(JobId job);
  void scan_storage(JobId job, std::vector<store::CheckpointRecord> recorded);
  void storage_scanned(JobId job, const StorageScan& scan);
  // Stops the attempt of a job that stayed over its storage quota past the grace (from tick()).
  void enforce_storage_quota(ActiveAttempt& attempt, MonoTime now);

  // A rank whose node is gone: counts as exited, with an infrastructure reason.
  void rank_lost(AttemptId id, int rank, const std::string& reason);
  void mark_rank_lost(ActiveAttempt& attempt, int rank, const std::string& reason);
  // How long a connected node may go unheard before it counts as not answering: two heartbeats.
  Millis unanswered_after() const { return 2 * config_.heartbeat_interval; }
  // A stopping attempt whose ranks still running are all on nodes not answering ends without them
  // (unheard_stops.h): true when it marked them lost.
  bool give_up_on_unheard_ranks(ActiveAttempt& attempt);
  // The node was heard without the attempt, or is DOWN: what it kept is free, and so is the job.
  void heard_stopped(const std::string& node, AttemptId attempt);
  // The node told what it runs: the attempts it was not heard to stop that it did not list it has.
  void heard_stopped_unless_listed(const std::string& node, const std::vector<AttemptReport>& listed);
  void unheard_stop_over(const UnheardStops::Stop& stop);
  void kill_attempt(ActiveAttempt& attempt, const std::string& reason, StopCause cause = StopCause::requested);
  // Stores that the job's attempt is being stopped to queue again, then stops it (saving first) and
  // gives `stored` the job, or nullopt when it ended meanwhile. With `not_stored` the stop is a
  // caller's request (persist_requested), else the daemon's own.
  void stop_to_queue_again(Job& job, StopIntent intent, const std::string& reason, store::Change change,
                           std::function<void(std::optional<Job>)> stored, std::function<void()> not_stored = nullptr);
  bool saves_before_stop(JobId job) const;  // whether its kill asks the attempt to checkpoint first
  // Preemption (job_manager_preemption.cpp): after a pass whose top job is blocked, the pure
  // decision (scheduler/preemption.h) may choose victims; they are stopped to queue again.
  void consider_preemption();
  std::vector<scheduler::PreemptionCandidate> preemption_candidates() const;
  // Stores a request's change of a pending job (hold, release, update), then queues it unless held
  // and answers with the job as stored; `what` names the change in the refusal when it could not be
  // stored (memory is then put back to `before`).
  void control_stored(store::Change change, const Job& before, const std::string& what, ControlDone done);
  void maybe_finish(AttemptId id);
  void finish_attempt(ActiveAttempt& attempt);
  static AttemptEndFacts attempt_end_facts(const ActiveAttempt& active);
  // Liveness (job_manager_liveness.cpp).
  void mark_node_down(const std::string& node, const std::string& reason);
  // Lists `jobs` (those the node ran) in the node's event: whom its loss hit.
  void name_jobs_hit(store::Event& event, const std::set<JobId>& jobs) const;
  // Recovery (job_manager_recovery.cpp, policy in recovery.h).
  void disconnect_grace_over(const std::string& node, MonoTime disconnected_at);
  // Loses the node's ranks that node_loss says are lost (all of them once the grace is over).
  void lose_ranks_of_gone_agent(const std::string& node);
  // The rank whose data-plane connection closed under `reporter`, if its node is lost now; else -1.
  int peer_lost_now(const ActiveAttempt& attempt, int reporter) const;
  // Chooses the spares and tests those due (recovery.h).
  void keep_spares_warm();
  // Starts a pending job's resume at once on the nodes that survived its attempt and spares, without
  // the scheduler's pass or the retry backoff; false when there are not enough of them.
  bool resume_on_spares(JobId id);
  // Whether the attempt needs a pre-flight; if so it is started.
  void start_preflight(AttemptId id);
  void launch_when_ready(AttemptId id);
  void check_stuck(ActiveAttempt& attempt, MonoTime now);
  // Feeds a rank's report to the attempt's straggler watch; a rank it names is recorded on the
  // attempt, its node is health-checked as soon as no attempt runs on it (only that check's verdict
  // takes it out of service: a job's own pace never does), and with replace_stragglers the job is
  // checkpointed and queued again without that node.
  void watch_for_stragglers(ActiveAttempt& attempt, int rank, const AttemptReport& report);
  // A command rank's idleness and whereabouts, from its agent's report (agent/rank_activity.h).
  void note_idleness(RankState& rank, const AttemptReport& report);
  void straggler_found(ActiveAttempt& attempt, int rank, double ratio);
  // Starts the after_straggler check of each node in stragglers_to_check_ that no attempt runs on.
  void check_idle_stragglers(const std::string& by);
  // A job left the view for good: counted, and kept among the recently ended.
  void note_ended(const Job& job);
  // The daemon was paused for `paused` before `now`: nodes' and ranks' silence counts without it.
  void excuse_own_pause(MonoTime now, Millis paused);
  void fence(const std::string& node, AttemptId id, const std::string& why);
  std::string checkpoint_dir_of(JobId job) const;

  // Health (job_manager_health.cpp).
  std::int64_t start_check(HealthCheckRequest request, std::function<void(const HealthCheckResult&)> then);
  void apply_health_result(const HealthCheckResult& result);
  void begin_attempt(AttemptId id);  // claim the checkpoints and choose the resume point, then pre-flight
  void choose_resume_point(AttemptId id, std::vector<store::CheckpointRecord> recorded);
  void resume_chosen(AttemptId id, Result<std::optional<ResumedCheckpoint>> chosen);
  std::vector<RankAdmission> admissions_of(const Attempt& attempt) const;
  // A network of its own for a command attempt whose nodes can all give it one (--job-network).
  std::optional<JobNetworkPlan> network_for(const Job& job, const Attempt& attempt);
  void on_preflight_done(AttemptId id, const HealthCheckResult& result);
  // A stuck attempt may have hung on a bad node: its hung ranks' nodes are tested, and the attempt
  // finishes (classified, retried) with the verdicts. True when the test started.
  bool test_stuck_nodes(ActiveAttempt& attempt);
  void submit_canary(JobSpec spec);
  bool canary_running() const;

  StoreWorker& store_;
  PendingWrites pending_;
  RequestTurns turns_;  // requests to one job or node, one at a time
  StoreOutage outage_;
  FileWorker& files_;
  const TimeSource& clock_;
  Timers& timers_;
  JobManagerConfig config_;
  scheduler::Scheduler& scheduler_;
  NodeRegistry nodes_;
  HealthChecks health_;
  Monitors monitors_;
  OwnPauses own_pauses_;
  LogFetcher logs_;
  StorageUsage storage_;
  std::map<JobId, Job> active_jobs_;
  AttemptTable attempts_;  // the attempts in flight, each job's current one, and survivors
  AttemptNetworks networks_{config_.job_network};  // their own networks' addresses (--job-network)
  ShareTable shares_;  // the shares admins created
  JobId max_job_id_ = 0;
  AttemptId max_attempt_id_ = 0;
  bool schedule_requested_ = false;
  bool queue_waits_for_nodes_ = false;  // the last pass left a job waiting for nodes (periodic checks wait)
  std::set<JobId> preempting_;  // victims still stopping: one preemption at a time
  RecentlyEnded recently_ended_{1000};
  std::set<std::string> stragglers_to_check_;  // nodes a straggler ran on, checked once no attempt runs there
  UnheardStops unheard_;  // nodes that may still run an ended attempt's rank, until their fence stops it
  bool closing_agent_connections_ = false;
  std::uint64_t accepted_since_tick_ = 0;  // submissions, summarised at info by tick()
  DaemonMetrics* metrics_ = nullptr;
  JobGraph graph_;  // arrays' tasks, ended jobs' states, who waits for whom
};

}  // namespace trainyard::daemon
