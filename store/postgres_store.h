#pragma once
// The daemon's store on a PostgreSQL server (`--store postgresql://...`), for teams that run the
// control plane on a replicated database they already operate.
//
// Design note: the same contract and the same tables as SqliteStore (store/sqlite_store.h): records
// whole as proto's JSON beside the columns queries filter and sort on, foreign keys, one transaction
// per `commit` batch (group commit). A batch travels as one pipeline: BEGIN, every statement
// (prepared once per connection), COMMIT and a Sync are sent without waiting for answers, so a
// batch of a thousand submissions costs one round trip and one WAL flush on the server, not a
// thousand. Durability is the server's: `commit` returns after PostgreSQL's COMMIT did, which with
// its default synchronous_commit = on means the WAL is flushed (and, with synchronous replication,
// on the standby too).
//
// Threading: one thread at a time (store/store.h), one connection. When the connection breaks
// (server restart, failover of the database), the store connects again and prepares its
// statements again: a read that found it broken is repeated once; a commit that found it broken
// throws, as any failed commit (its outcome is unknown), and the next one runs on the new connection.
#include <chrono>
#include <memory>
#include <string>

#include "store/postgres.h"
#include "store/store.h"

namespace trainyard::store {

// A daemon's session: the server ends a transaction of it left idle this long, as one whose daemon
// froze (SIGSTOP, a VM stall) between two round trips of a commit. Its fence holds the lease row
// (FOR SHARE), which would otherwise hold off a standby's take-over for as long as the freeze lasts.
// Commits never idle between round trips for more than moments: one cut short is retried.
inline constexpr std::chrono::milliseconds kIdleTransactionLimit{2000};
void end_idle_transactions(pg::Connection& session);

class PostgresStore final : public Store {
 public:
  // Connects with `conninfo` (a postgresql:// URI or libpq key=value string) and applies pending
  // schema migrations. Throws StoreError when the server cannot be reached or its schema is newer
  // than this build.
  explicit PostgresStore(const std::string& conninfo);
  ~PostgresStore() override;

  // Throws CommitInDoubt when the server went away after COMMIT was sent: the transaction's id,
  // taken before the changes are sent, is what `was_committed` looks up (pg_xact_status).
  void commit(std::span<const Change> batch) override;
  std::optional<bool> was_committed(const std::string& transaction) override;
  LoadedState load() override;

  std::optional<Job> job(JobId id) override;
  std::vector<Job> jobs(const JobQuery& query) override;
  std::vector<Attempt> attempts_of(JobId job) override;
  std::vector<Attempt> attempts_of_jobs(std::span<const JobId> jobs) override;
  std::vector<Attempt> attempts_running_since(TimePoint from, JobId before_job, int limit) override;
  std::optional<Attempt> attempt(AttemptId id) override;
  std::optional<Node> node(const std::string& name) override;
  std::optional<TokenRecord> token_by_hash(const std::string& hash) override;
  std::vector<TokenRecord> tokens() override;
  std::vector<MetricRecord> metrics_of(JobId job) override;
  std::vector<CheckpointRecord> checkpoints_of(JobId job) override;
  std::optional<HealthCheckRow> health_check(std::int64_t id) override;
  std::vector<HealthCheckRow> recent_health_checks(std::int64_t before_id, int limit) override;
  std::vector<NodeHealthRow> node_health(const std::string& node, std::int64_t before_check_id, int limit) override;
  std::vector<Event> events_after(std::int64_t seq, int limit) override;
  std::vector<Event> events_before(std::int64_t seq, int limit) override;
  std::vector<Event> events_of_kind(const std::string& kind_prefix, std::int64_t seq, int limit) override;
  std::int64_t prune_events(TimePoint older_than, std::int64_t keep_from_seq) override;
  std::int64_t last_event_seq() override;
  std::vector<WebhookDelivery> webhook_deliveries(std::int64_t webhook_id, std::optional<std::int64_t> before_n,
                                                  int limit) override;
  std::vector<WebhookDelivery> open_webhook_deliveries(std::int64_t webhook_id) override;
  std::optional<std::int64_t> webhooks_keep_from_seq() override;
  std::vector<ClusterSampleRow> cluster_samples_since(TimePoint from) override;
  int schema_version() override;
  std::string cluster_name() override;
  std::optional<LeaseState> acquire_or_renew(const std::string& holder, const std::string& advertise_url,
                                             std::chrono::milliseconds ttl) override;
  void release_lease() override;

 private:
  void send(pg::Connection::Pipeline& pipeline, const Change& change);
  // Runs a prepared read, on a new connection when the old one broke.
  pg::Result read(const char* statement, const pg::Params& params = {});

  pg::Connection db_;
  std::optional<std::int64_t> epoch_;  // the lease's epoch this store took: its writes are fenced by it
};

}  // namespace trainyard::store
