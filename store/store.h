#pragma once
// What the daemon needs from persistence (docs/STYLE.md "Interface, implementation, fake"): the interface
// here, SQLite and PostgreSQL behind it, an in-memory fake under tests/ that passes the same conformance tests.
//
// Threading contract: a Store is used by one thread at a time (the daemon's store worker). It
// blocks; the daemon never calls it from its I/O thread.
//
// Durability contract: `commit` returns only after every change in the batch is durable, all in
// one transaction: either all of them are stored or none (then it throws StoreError). The daemon
// acknowledges a change (a 201, a launch) only after its commit returned.
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "proto/job.h"
#include "proto/metrics.h"
#include "proto/node.h"

namespace trainyard::store {

// What each role may do is daemon/base/roles.h; `operator` is a C++ keyword, hence `operator_`.
enum class Role { admin, operator_, user, viewer, agent };
std::string to_string(Role r);
std::optional<Role> parse_role(std::string_view s);

struct TokenRecord {
  std::string hash;  // hex SHA-256 of the secret; the secret itself is never stored
  std::string user;
  Role role = Role::user;
  TimePoint created_at{};
  std::string id;  // public name of the token (listing, revoking); not a credential
  std::optional<TimePoint> expires_at;
  std::optional<TimePoint> last_used_at;  // persisted lazily (Change::token_uses)
  bool operator==(const TokenRecord&) const = default;
};

// Fair-share bookkeeping for one share (filled in by the scheduler).
struct ShareRecord {
  std::string name;
  double weight = 1.0;
  std::optional<int> max_running_cores;
  double usage_core_s = 0;  // decayed usage as of `usage_at`
  TimePoint usage_at{};
  // An admin created it (PUT /v1/shares/{name}); rows without it only carry the usage of jobs
  // submitted before shares had to be created.
  bool created = false;
  std::optional<std::vector<std::string>> members;  // who may submit into it; nullopt: every user
  std::optional<std::int64_t> storage_limit_mb;  // checkpoint and log MiB its jobs may keep together
  bool operator==(const ShareRecord&) const = default;
};

// How much an event matters to a person: info (routine), warning (look soon), error (act now).
enum class Severity { info, warning, error };
std::string to_string(Severity s);
std::optional<Severity> parse_severity(std::string_view s);

// An append-only record of a state change: the events log behind GET /v1/events, its stream, the
// webhooks and the audit log. Written in the same transaction as the change it tells of.
struct Event {
  std::int64_t seq = 0;  // assigned by the store on commit; never reused
  TimePoint at{};
  std::string kind;  // "job.submitted", "job.failed", "node.down", "audit.token.created", ...
  Severity severity = Severity::info;
  std::optional<JobId> job_id;
  std::optional<AttemptId> attempt_id;
  std::string node;   // empty: concerns no node
  std::string user;   // the job's owner, or who made an admin change; empty: none
  std::string share;  // the job's share; empty: none
  std::string message;  // one line a person reads
  Json details = Json::object();
  bool operator==(const Event&) const = default;
};

// A finished health check, whole (its JSON is the API's GET /v1/healthchecks/{id} shape).
struct HealthCheckRow {
  std::int64_t id = 0;
  std::string kind;
  TimePoint created_at{};
  Json record;
  bool operator==(const HealthCheckRow&) const = default;
};

// One node's part of a health check: its verdict and the values measured on it.
struct NodeHealthRow {
  std::string node;
  std::int64_t check_id = 0;
  TimePoint at{};
  std::string state;  // the verdict: HEALTHY, SUSPECT, UNHEALTHY, or NOT_TESTED
  Json record;
  bool operator==(const NodeHealthRow&) const = default;
};

// A checkpoint an attempt of the job reported publishing (MetricsMsg::checkpoints). A retry resumes
// only from a checkpoint recorded here whose manifest still has this digest, so nothing planted in
// the job's directory, and nothing a fenced-off attempt wrote, is ever resumed from.
struct CheckpointRecord {
  JobId job_id = 0;
  AttemptId attempt_id = 0;
  std::int64_t step = 0;
  std::string manifest_sha256;
  TimePoint recorded_at{};
  bool operator==(const CheckpointRecord&) const = default;
};

// A webhook (docs/DESIGN.md "Webhooks"). The secret is stored as it is: it signs every
// request, so it cannot be a hash; the API shows it once, at creation.
struct WebhookRecord {
  std::int64_t id = 0;
  std::string owner;  // the user who created it
  TimePoint created_at{};
  std::string url;
  std::vector<std::string> events;  // globs over event types
  std::string format;               // "slack" or "json"
  Json filter = Json::object();     // {"share", "user", "job"}, each optional
  std::string secret;
  // Every event up to this seq has been delivered, dead-lettered or skipped as not matching: where
  // the webhook's delivery resumes (the outbox is this cursor over the events log).
  std::int64_t cursor_seq = 0;
  // Made by a user, not an admin: every connection must reach a public address (checked again at
  // connect time, against DNS rebinding).
  bool restricted = false;
  bool operator==(const WebhookRecord&) const = default;
};

// One message to a webhook (an event, or a fold of several: storm control) and its attempts.
// pending: being tried; delivered; dead: gave up (dead-lettered); retrying: an operator asked to
// send a dead one again.
enum class DeliveryState { pending, delivered, dead, retrying };
std::string to_string(DeliveryState s);
std::optional<DeliveryState> parse_delivery_state(std::string_view s);

struct WebhookDelivery {
  std::int64_t webhook_id = 0;
  std::int64_t n = 0;  // 1, 2, 3, ... per webhook
  std::int64_t first_seq = 0;  // the events it carries
  std::int64_t last_seq = 0;
  DeliveryState state = DeliveryState::pending;
  int attempts = 0;
  TimePoint first_attempt_at{};
  std::optional<TimePoint> next_attempt_at;
  Json log = Json::array();  // the latest attempts: {"at", "status", "latency_ms", "error", "next_retry"}
  bool operator==(const WebhookDelivery&) const = default;
};

// One sample of the whole cluster, kept for its history over days (GET /v1/cluster/history). The
// record's shape is the daemon's (daemon/cluster_history.h); the store keeps it by time.
struct ClusterSampleRow {
  TimePoint at{};
  Json record;
  bool operator==(const ClusterSampleRow&) const = default;
};

// A record as stored: compact JSON, invalid UTF-8 replaced rather than refused (reasons and
// messages can quote process output).
std::string record_text(const Json& record);
// A job's stored record, record_text(to_json(job)); the API answers a submission with this text.
std::string job_record(const Job& job);

// One state change: everything it writes. Records are upserted whole; events are appended.
struct Change {
  std::vector<Job> jobs;
  // Either empty or job_record(jobs[i]) for every job, rendered once by whoever also needs the
  // text (the store worker, for the submission's answer); a store writes these as they are.
  std::vector<std::string> job_records;
  std::vector<Attempt> attempts;
  std::vector<Node> nodes;
  std::vector<TokenRecord> tokens;
  std::vector<ShareRecord> shares;
  std::vector<Event> events;
  std::vector<MetricRecord> metrics;  // upserted by (attempt, step): a resent batch changes nothing
  std::vector<HealthCheckRow> health_checks;
  std::vector<NodeHealthRow> node_health;
  // Hashes of tokens to delete, after the upserts above (a forgotten node credential).
  std::vector<std::string> revoked_tokens;
  // When tokens were last used, by hash; a token not stored (revoked meanwhile) is left absent.
  std::vector<std::pair<std::string, TimePoint>> token_uses;
  std::vector<CheckpointRecord> checkpoints;  // upserted by (job, step): a rewritten step's newest report wins
  std::vector<WebhookRecord> webhooks;                  // upserted whole by id
  std::vector<WebhookDelivery> webhook_deliveries;     // upserted by (webhook, n); ignored for a deleted webhook
  std::vector<std::pair<std::int64_t, std::int64_t>> webhook_cursors;  // (webhook, seq); ignored for a deleted one
  std::vector<std::int64_t> deleted_webhooks;          // with their deliveries, after everything above
  std::vector<std::string> deleted_shares;             // by name, after the upserts above
  std::vector<ClusterSampleRow> cluster_samples;       // upserted by time
  // Deletes the cluster samples taken before it, after the upserts above (their retention).
  std::optional<TimePoint> cluster_samples_kept_from;
};

struct JobQuery {
  std::vector<JobState> states;  // any of these; empty: every state
  std::optional<std::string> share;
  std::optional<std::string> user;
  std::optional<JobId> before_id;  // pagination cursor: only ids below this
  std::optional<JobId> after_id;   // only ids above this
  std::optional<TimePoint> submitted_since;  // submitted at or after
  std::optional<TimePoint> submitted_until;  // submitted before
  int limit = 100;                 // newest first
};

// Everything the daemon rebuilds its in-memory view from at start-up.
struct LoadedState {
  std::vector<Job> active_jobs;          // PENDING, STARTING, RUNNING
  std::vector<Attempt> active_attempts;  // STARTING, RUNNING
  std::vector<Node> nodes;
  std::vector<ShareRecord> shares;
  JobId max_job_id = 0;
  AttemptId max_attempt_id = 0;
  std::int64_t max_health_check_id = 0;
  std::vector<WebhookRecord> webhooks;  // in id order
  std::int64_t max_webhook_id = 0;      // deleted ones included: ids are never reused
};

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Active / standby (docs/DESIGN.md "Active and standby"): of the daemons on one shared store, the one holding the
// lease is active. What a daemon learns when it tries to take or keep it.
struct LeaseState {
  bool held = false;
  std::int64_t epoch = 0;  // raised by every take-over; the holder's writes are fenced by it
  std::string active_url;  // the holder's advertise URL while its lease runs; empty when none does
  bool operator==(const LeaseState&) const = default;
};

// A write of a daemon whose lease was taken over (a higher epoch holds it): nothing of it was stored.
class LeaseLost : public StoreError {
 public:
  using StoreError::StoreError;
};

// A commit whose answer was lost (the server went away after COMMIT was sent): it may or may not
// have been stored. `Store::was_committed(transaction)` tells once the store answers again.
class CommitInDoubt : public StoreError {
 public:
  CommitInDoubt(std::string transaction, const std::string& message)
      : StoreError(message), transaction_(std::move(transaction)) {}
  const std::string& transaction() const { return transaction_; }

 private:
  std::string transaction_;
};

class Store {
 public:
  virtual ~Store() = default;

  // Writes the changes in order (a later upsert of the same record wins), all in one transaction.
  // Within a change, jobs are written before attempts, and an attempt's job must already be stored
  // or come earlier in the batch. Events get consecutive `seq` numbers in batch order; the `seq`
  // passed in is ignored.
  virtual void commit(std::span<const Change> batch) = 0;
  // Whether the transaction a CommitInDoubt named was stored: nullopt while the store cannot say yet
  // (unreachable, or the transaction still finishing). Only a store that throws CommitInDoubt is asked.
  virtual std::optional<bool> was_committed(const std::string& transaction);
  // Active jobs and attempts in id order, nodes and shares in name order, and the highest ids
  // ever stored (terminal records included), so new ids never repeat one.
  virtual LoadedState load() = 0;

  virtual std::optional<Job> job(JobId id) = 0;
  // Newest first (descending id); `query.limit` must be positive.
  virtual std::vector<Job> jobs(const JobQuery& query) = 0;
  // In id order (the order they were created).
  virtual std::vector<Attempt> attempts_of(JobId job) = 0;
  // The attempts of every job in `jobs`, by job, then id: one query for a page of jobs.
  virtual std::vector<Attempt> attempts_of_jobs(std::span<const JobId> jobs) = 0;
  // The attempts still running or ended at or after `from` of the jobs below `before_job`, newest
  // job first and newest attempt first within it, at most `limit`: for each job a suffix of its
  // attempts (a later attempt starts after an earlier one ended). A page is bounded work; the last
  // job of a full page may continue on the next (docs/DESIGN.md "Goodput").
  virtual std::vector<Attempt> attempts_running_since(TimePoint from, JobId before_job, int limit) = 0;
  virtual std::optional<Attempt> attempt(AttemptId id) = 0;
  virtual std::optional<Node> node(const std::string& name) = 0;
  virtual std::optional<TokenRecord> token_by_hash(const std::string& hash) = 0;
  // Every token (they are few), oldest first (by created_at, then hash); the daemon keeps them in
  // memory to authenticate without I/O.
  virtual std::vector<TokenRecord> tokens() = 0;
  virtual std::optional<HealthCheckRow> health_check(std::int64_t id) = 0;
  // The newest health checks with ids below `before_id` first, at most `limit` (positive).
  virtual std::vector<HealthCheckRow> recent_health_checks(std::int64_t before_id, int limit) = 0;
  // A node's health history below check `before_check_id`, newest check first, at most `limit` (positive) rows.
  virtual std::vector<NodeHealthRow> node_health(const std::string& node, std::int64_t before_check_id, int limit) = 0;
  // Every step metric of a job's attempts, by step, then attempt id.
  virtual std::vector<MetricRecord> metrics_of(JobId job) = 0;
  // A job's recorded checkpoints, by step.
  virtual std::vector<CheckpointRecord> checkpoints_of(JobId job) = 0;
  // Events with a sequence number above `seq`, oldest first, at most `limit` (positive) of them.
  virtual std::vector<Event> events_after(std::int64_t seq, int limit) = 0;
  // Events with a sequence number below `seq`, newest first, at most `limit` (positive): a feed
  // read back from its end.
  virtual std::vector<Event> events_before(std::int64_t seq, int limit) = 0;
  // The same as events_after, only events whose kind starts with `kind_prefix` (the audit log: "audit.").
  virtual std::vector<Event> events_of_kind(const std::string& kind_prefix, std::int64_t seq, int limit) = 0;
  // Retention: deletes the events older than `older_than` whose seq is below `keep_from_seq` (an
  // event a reader still needs, e.g. one a webhook has not had, is kept whatever its age), in one
  // transaction; returns how many. Sequence numbers are never reused after a prune. In the same
  // transaction it deletes the delivered and dead webhook deliveries whose events are all gone
  // (never a pending or retrying one, nor a webhook's newest, which numbering continues from).
  virtual std::int64_t prune_events(TimePoint older_than, std::int64_t keep_from_seq) = 0;
  // The newest event's seq; 0 when there is none. A new webhook starts after it.
  virtual std::int64_t last_event_seq() = 0;
  // A webhook's deliveries, newest first, only those numbered below `before_n` when given; `limit` positive.
  virtual std::vector<WebhookDelivery> webhook_deliveries(std::int64_t webhook_id, std::optional<std::int64_t> before_n,
                                                          int limit) = 0;
  // A webhook's pending and retrying deliveries, in number order: what its delivery resumes with.
  virtual std::vector<WebhookDelivery> open_webhook_deliveries(std::int64_t webhook_id) = 0;
  // The oldest event seq a webhook still needs (past a cursor, or carried by an open delivery);
  // nullopt when none. Event retention must keep it and everything after it.
  virtual std::optional<std::int64_t> webhooks_keep_from_seq() = 0;
  // The cluster samples taken at or after `from`, oldest first.
  virtual std::vector<ClusterSampleRow> cluster_samples_since(TimePoint from) = 0;
  virtual int schema_version() = 0;
  // The cluster's name: 16 lowercase hex digits made once with the database, or empty for a
  // database that held jobs before names were made (schema migration 15).
  virtual std::string cluster_name() = 0;

  // Takes the lease for `holder` when no live one is held (raising the epoch), or, once this store
  // took it, renews it for `ttl` (keeping the epoch: a lease lost once is never taken back by the
  // same store). Expiry is the database's clock. From the take-over on, every write transaction
  // of this store checks the epoch inside itself and throws LeaseLost when it has moved on.
  // nullopt: the store serves one daemon only (SQLite), which is always active.
  virtual std::optional<LeaseState> acquire_or_renew(const std::string& /*holder*/, const std::string& /*advertise_url*/,
                                                     std::chrono::milliseconds /*ttl*/) {
    return std::nullopt;
  }
  // Ends the lease this store holds now rather than a ttl after its last renewal, so a standby takes
  // over at its next try (a graceful shutdown, after the last commit). Writes stay fenced by the
  // epoch: one after a take-over fails as LeaseLost. Nothing to do without a lease.
  virtual void release_lease() {}
};

// The jobs that dependencies on `ids` cover, as stored: each id's job, and every task of an array
// when the id is an array's. Missing ids are left out (the caller refuses them as unknown).
std::vector<Job> jobs_depended_on(Store& store, const std::vector<JobId>& ids);

}  // namespace trainyard::store
