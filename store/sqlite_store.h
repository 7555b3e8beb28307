#pragma once
// The daemon's store on an embedded SQLite file.
//
// Design note: durability first, then speed. The file is in WAL mode with synchronous=FULL, so
// `commit` returns only after the transaction's WAL frames are fsynced: an acknowledged change
// survives kill -9 and power loss. Throughput comes from group commit (the daemon passes many
// changes per `commit`, one transaction and one fsync for all of them) and from statements
// prepared once for the store's life. Records are stored whole as proto's JSON beside copies of
// the columns that queries filter and sort on, so there is one codec for the API and the disk.
// Foreign keys are on: an attempt cannot name a job that is not stored.
//
// Threading: one thread at a time (store/store.h); the connection is opened without SQLite's own
// mutexes. Another process may read the file concurrently (WAL), and a writer waits up to the
// busy timeout for the lock rather than failing at once.
#include <filesystem>
#include <memory>

#include "store/sqlite.h"
#include "store/store.h"

namespace trainyard::store {

class SqliteStore final : public Store {
 public:
  // Opens `file`, creating it when missing, and applies pending schema migrations. Throws
  // StoreError when the file is not a usable database or its schema is newer than this build.
  explicit SqliteStore(const std::filesystem::path& file);
  ~SqliteStore() override;

  void commit(std::span<const Change> batch) override;
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

 private:
  struct Statements;
  class RowWrites;

  // Writes batch[index]; its jobs and attempts only where `rows_written` says (RowWrites).
  void write(std::span<const Change> batch, std::size_t index, const RowWrites& rows_written);
  void write_webhooks(const Change& change);
  sqlite::Statement& job_query_for(const JobQuery& query);

  sqlite::Connection db_;
  std::unique_ptr<Statements> statements_;
};

}  // namespace trainyard::store
