#include "store/schema.h"

#include <spdlog/spdlog.h>

#include <array>
#include <cassert>
#include <string>

#include "store/store.h"

namespace trainyard::store {
namespace {

// Records are kept whole as proto's JSON in `record` (the API's shape, one codec); the other
// columns are copies of the fields that queries filter and sort on.
constexpr std::string_view kInitialSchema = R"sql(
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY,
  user TEXT NOT NULL,
  share TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('PENDING','STARTING','RUNNING','SUCCEEDED','FAILED','CANCELLED')),
  priority INTEGER NOT NULL,
  submitted_at_ms INTEGER NOT NULL,
  record TEXT NOT NULL
);
CREATE INDEX jobs_by_state ON jobs (state, id);
CREATE INDEX jobs_by_share ON jobs (share, id);
CREATE INDEX jobs_by_user ON jobs (user, id);

CREATE TABLE attempts (
  id INTEGER PRIMARY KEY,
  job_id INTEGER NOT NULL REFERENCES jobs (id),
  number INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('STARTING','RUNNING','SUCCEEDED','FAILED','CANCELLED')),
  record TEXT NOT NULL
);
CREATE INDEX attempts_by_job ON attempts (job_id, id);
CREATE INDEX attempts_by_state ON attempts (state, id);

CREATE TABLE nodes (
  name TEXT PRIMARY KEY,
  state TEXT NOT NULL CHECK (state IN ('HEALTHY','SUSPECT','UNHEALTHY','DRAINED','DOWN')),
  record TEXT NOT NULL
) WITHOUT ROWID;

-- Only the SHA-256 of a token's secret is ever stored.
CREATE TABLE tokens (
  hash TEXT PRIMARY KEY,
  user TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('admin','user','agent')),
  created_at_ms INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE shares (
  name TEXT PRIMARY KEY,
  weight REAL NOT NULL,
  max_running_cores INTEGER,
  usage_core_s REAL NOT NULL,
  usage_at_ms INTEGER NOT NULL
) WITHOUT ROWID;

-- Append-only. AUTOINCREMENT: a sequence number is never reused, so a reader's cursor stays valid.
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  job_id INTEGER,
  attempt_id INTEGER,
  node TEXT NOT NULL,
  message TEXT NOT NULL
);
)sql";

// Per-step training metrics. Columns rather than a JSON record: there are many rows per job and
// the API aggregates them. A NaN stored in a REAL column reads back as NULL (SQLite has no NaN).
constexpr std::string_view kMetricsSchema = R"sql(
CREATE TABLE metrics (
  job_id INTEGER NOT NULL,
  attempt_id INTEGER NOT NULL REFERENCES attempts (id),
  step INTEGER NOT NULL,
  loss REAL,
  grad_norm REAL,
  param_norm REAL,
  lr REAL,
  samples_per_s REAL,
  spike INTEGER NOT NULL,
  spike_steps_to_return INTEGER,
  PRIMARY KEY (job_id, step, attempt_id)
) WITHOUT ROWID;
)sql";

// Health checks whole, and each node's part of them (its history). Kept as records like jobs: the
// API shows them as they are.
constexpr std::string_view kHealthSchema = R"sql(
CREATE TABLE health_checks (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  record TEXT NOT NULL
);
CREATE TABLE node_health (
  node TEXT NOT NULL,
  check_id INTEGER NOT NULL,
  at_ms INTEGER NOT NULL,
  state TEXT NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (node, check_id)
) WITHOUT ROWID;
)sql";

// Who may submit into a share. Only admins create shares now; rows from before that an admin's
// PUT visibly shaped (a weight other than 1 or a cap) count as created and stay open to every
// user; the rest (usage of shares users invented, and `system`) are bookkeeping only.
constexpr std::string_view kShareAccessSchema = R"sql(
ALTER TABLE shares ADD COLUMN created INTEGER NOT NULL DEFAULT 0;
ALTER TABLE shares ADD COLUMN members TEXT;
UPDATE shares SET created = 1 WHERE name <> 'system' AND (weight <> 1.0 OR max_running_cores IS NOT NULL);
)sql";

// The checkpoints each job's attempts reported writing (store.h CheckpointRecord).
constexpr std::string_view kCheckpointsSchema = R"sql(
CREATE TABLE checkpoints (
  job_id INTEGER NOT NULL,
  step INTEGER NOT NULL,
  attempt_id INTEGER NOT NULL REFERENCES attempts (id),
  manifest_sha256 TEXT NOT NULL,
  recorded_at_ms INTEGER NOT NULL,
  PRIMARY KEY (job_id, step)
) WITHOUT ROWID;
)sql";

// Tokens get a public id, an expiry and a last-used time, and the operator and viewer roles. SQLite
// cannot change a CHECK constraint in place, hence the copy; tokens from before get random ids.
constexpr std::string_view kTokenLifecycleSchema = R"sql(
CREATE TABLE tokens_v6 (
  hash TEXT PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  user TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('admin','operator','user','viewer','agent')),
  created_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER,
  last_used_at_ms INTEGER
) WITHOUT ROWID;
INSERT INTO tokens_v6 (hash, id, user, role, created_at_ms)
  SELECT hash, 'tok_' || lower(hex(randomblob(8))), user, role, created_at_ms FROM tokens;
DROP TABLE tokens;
ALTER TABLE tokens_v6 RENAME TO tokens;
)sql";

// Events carry what webhooks and the dashboard filter on: severity, the job's owner and share, and
// structured details; indexes serve the per-job feed and retention pruning by time.
constexpr std::string_view kEventDetailsSchema = R"sql(
ALTER TABLE events ADD COLUMN severity TEXT NOT NULL DEFAULT 'info' CHECK (severity IN ('info','warning','error'));
ALTER TABLE events ADD COLUMN user TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN share TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN details TEXT NOT NULL DEFAULT '{}';
CREATE INDEX events_by_job ON events (job_id, seq) WHERE job_id IS NOT NULL;
CREATE INDEX events_by_time ON events (at_ms);
)sql";

// Webhooks and their deliveries (docs/DESIGN.md "Webhooks"). The outbox is each webhook's
// cursor over the events log plus its open deliveries; delivered and dead ones stay as history.
constexpr std::string_view kWebhooksSchema = R"sql(
CREATE TABLE webhooks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  owner TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  format TEXT NOT NULL CHECK (format IN ('slack','json')),
  filter TEXT NOT NULL,
  secret TEXT NOT NULL,
  cursor_seq INTEGER NOT NULL,
  restricted INTEGER NOT NULL
);
CREATE TABLE webhook_deliveries (
  webhook_id INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  n INTEGER NOT NULL,
  first_seq INTEGER NOT NULL,
  last_seq INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending','delivered','dead','retrying')),
  attempts INTEGER NOT NULL,
  first_attempt_at_ms INTEGER NOT NULL,
  next_attempt_at_ms INTEGER,
  log TEXT NOT NULL,
  PRIMARY KEY (webhook_id, n)
) WITHOUT ROWID;
CREATE INDEX webhook_deliveries_open ON webhook_deliveries (webhook_id, n) WHERE state IN ('pending','retrying');
)sql";

// When each attempt ended, as a column: cluster goodput over a window reads the attempts that ran in
// it (still running, or ended inside it) through this index, not a scan of every attempt ever.
// Rows stored before it take the time from their record (RFC 3339 UTC; julianday reads it).
constexpr std::string_view kAttemptEndSchema = R"sql(
ALTER TABLE attempts ADD COLUMN ended_at_ms INTEGER;
UPDATE attempts SET ended_at_ms =
  CAST(ROUND((julianday(json_extract(record, '$.ended_at')) - 2440587.5) * 86400000) AS INTEGER)
  WHERE json_extract(record, '$.ended_at') IS NOT NULL;
CREATE INDEX attempts_by_end ON attempts (ended_at_ms);
)sql";

// Attempts stopped to make way (requeue, preemption) end REQUEUED or PREEMPTED. SQLite
// cannot change a CHECK in place: the table is copied, rebuilt and refilled in the migration's
// transaction, with foreign keys deferred so the rows that reference attempts stay valid.
constexpr std::string_view kAttemptStopStatesSchema = R"sql(
PRAGMA defer_foreign_keys = ON;
CREATE TABLE attempts_before AS SELECT * FROM attempts;
DROP TABLE attempts;
CREATE TABLE attempts (
  id INTEGER PRIMARY KEY,
  job_id INTEGER NOT NULL REFERENCES jobs (id),
  number INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('STARTING','RUNNING','SUCCEEDED','FAILED','CANCELLED','REQUEUED','PREEMPTED')),
  record TEXT NOT NULL,
  ended_at_ms INTEGER
);
INSERT INTO attempts (id, job_id, number, state, record, ended_at_ms)
  SELECT id, job_id, number, state, record, ended_at_ms FROM attempts_before;
DROP TABLE attempts_before;
CREATE INDEX attempts_by_job ON attempts (job_id, id);
CREATE INDEX attempts_by_state ON attempts (state, id);
CREATE INDEX attempts_by_end ON attempts (ended_at_ms);
)sql";

// Storage quotas per share: the checkpoint and log MiB its jobs may keep together.
constexpr std::string_view kShareStorageSchema = R"sql(
ALTER TABLE shares ADD COLUMN storage_limit_mb INTEGER;
)sql";

// Active / standby is PostgreSQL's: one daemon opens a SQLite file, so nothing
// takes this row here. The table is kept so that both stores have the same schema at one version.
constexpr std::string_view kLeaseSchema = R"sql(
CREATE TABLE lease (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  holder TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  advertise_url TEXT NOT NULL,
  expires_at_ms INTEGER NOT NULL
);
INSERT INTO lease (id, holder, epoch, advertise_url, expires_at_ms) VALUES (1, '', 0, '', 0);
)sql";

// SQLite codes a CHECK's IN list of more than two values as a temporary table, built and torn
// down for every row written: about 1.5 us a row, 5% of the daemon's CPU per trivial job
// (bench/trivial_jobs/RESULTS.md "Fourth round"). The same checks as comparisons cost nothing of
// the kind. SQLite cannot change a CHECK in place, so each table is copied, rebuilt and refilled,
// as for step 10 (foreign keys deferred, the rows that reference jobs and attempts stay valid);
// events keep their sequence, so a seq is still never reused.
constexpr std::string_view kChecksAsComparisonsSchema = R"sql(
PRAGMA defer_foreign_keys = ON;

CREATE TABLE jobs_before AS SELECT * FROM jobs;
DROP TABLE jobs;
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY,
  user TEXT NOT NULL,
  share TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state = 'PENDING' OR state = 'STARTING' OR state = 'RUNNING' OR state = 'SUCCEEDED'
                             OR state = 'FAILED' OR state = 'CANCELLED'),
  priority INTEGER NOT NULL,
  submitted_at_ms INTEGER NOT NULL,
  record TEXT NOT NULL
);
INSERT INTO jobs (id, user, share, state, priority, submitted_at_ms, record)
  SELECT id, user, share, state, priority, submitted_at_ms, record FROM jobs_before;
DROP TABLE jobs_before;
CREATE INDEX jobs_by_state ON jobs (state, id);
CREATE INDEX jobs_by_share ON jobs (share, id);
CREATE INDEX jobs_by_user ON jobs (user, id);

CREATE TABLE attempts_before AS SELECT * FROM attempts;
DROP TABLE attempts;
CREATE TABLE attempts (
  id INTEGER PRIMARY KEY,
  job_id INTEGER NOT NULL REFERENCES jobs (id),
  number INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state = 'STARTING' OR state = 'RUNNING' OR state = 'SUCCEEDED' OR state = 'FAILED'
                             OR state = 'CANCELLED' OR state = 'REQUEUED' OR state = 'PREEMPTED'),
  record TEXT NOT NULL,
  ended_at_ms INTEGER
);
INSERT INTO attempts (id, job_id, number, state, record, ended_at_ms)
  SELECT id, job_id, number, state, record, ended_at_ms FROM attempts_before;
DROP TABLE attempts_before;
CREATE INDEX attempts_by_job ON attempts (job_id, id);
CREATE INDEX attempts_by_state ON attempts (state, id);
CREATE INDEX attempts_by_end ON attempts (ended_at_ms);

CREATE TABLE events_before AS SELECT * FROM events;
CREATE TABLE events_sequence_before AS
  SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0),
             COALESCE((SELECT MAX(seq) FROM events), 0)) AS seq;
DROP TABLE events;
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  job_id INTEGER,
  attempt_id INTEGER,
  node TEXT NOT NULL,
  message TEXT NOT NULL,
  severity TEXT NOT NULL DEFAULT 'info' CHECK (severity = 'info' OR severity = 'warning' OR severity = 'error'),
  user TEXT NOT NULL DEFAULT '',
  share TEXT NOT NULL DEFAULT '',
  details TEXT NOT NULL DEFAULT '{}'
);
INSERT INTO events (seq, at_ms, kind, job_id, attempt_id, node, message, severity, user, share, details)
  SELECT seq, at_ms, kind, job_id, attempt_id, node, message, severity, user, share, details FROM events_before;
DELETE FROM sqlite_sequence WHERE name = 'events';
INSERT INTO sqlite_sequence (name, seq) SELECT 'events', seq FROM events_sequence_before WHERE seq > 0;
DROP TABLE events_before;
DROP TABLE events_sequence_before;
CREATE INDEX events_by_job ON events (job_id, seq) WHERE job_id IS NOT NULL;
CREATE INDEX events_by_time ON events (at_ms);

CREATE TABLE nodes_before AS SELECT * FROM nodes;
DROP TABLE nodes;
CREATE TABLE nodes (
  name TEXT PRIMARY KEY,
  state TEXT NOT NULL CHECK (state = 'HEALTHY' OR state = 'SUSPECT' OR state = 'UNHEALTHY' OR state = 'DRAINED'
                             OR state = 'DOWN'),
  record TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO nodes (name, state, record) SELECT name, state, record FROM nodes_before;
DROP TABLE nodes_before;
)sql";

// Samples of the whole cluster, for its history over days (store.h ClusterSampleRow).
constexpr std::string_view kClusterHistorySchema = R"sql(
CREATE TABLE cluster_samples (
  at_ms INTEGER PRIMARY KEY,
  record TEXT NOT NULL
);
)sql";

// The cluster's name, made once with its database (Store::cluster_name): it names the directories
// and picks the per-job uids of its jobs on every node, so a new database beside an old one's files,
// or two clusters on one host, never share them. A database that held jobs before this migration
// keeps the empty name, and with it the directories and uids its jobs already have.
constexpr std::string_view kClusterIdentitySchema = R"sql(
CREATE TABLE cluster_identity (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  name TEXT NOT NULL
);
INSERT INTO cluster_identity (id, name)
  SELECT 1, CASE WHEN EXISTS (SELECT 1 FROM jobs) THEN '' ELSE lower(hex(randomblob(8))) END;
)sql";

constexpr std::array kMigrations = {
    Migration{1, "initial: jobs, attempts, nodes, tokens, shares, events", kInitialSchema},
    Migration{2, "metrics: per-step training metrics", kMetricsSchema},
    Migration{3, "health: health checks and per-node health history", kHealthSchema},
    Migration{4, "share access: shares created by admins, and their members", kShareAccessSchema},
    Migration{5, "checkpoints: the checkpoints each job's attempts reported", kCheckpointsSchema},
    Migration{6, "token lifecycle: ids, expiry, last use; operator and viewer roles", kTokenLifecycleSchema},
    Migration{7, "event details: severity, user, share, details; indexes by job and time", kEventDetailsSchema},
    Migration{8, "webhooks: subscriptions, their cursors over the events log, and deliveries", kWebhooksSchema},
    Migration{9, "attempt ends: when each attempt ended, indexed, for goodput over a window", kAttemptEndSchema},
    Migration{10, "attempt stop states: REQUEUED and PREEMPTED", kAttemptStopStatesSchema},
    Migration{11, "share storage quotas", kShareStorageSchema},
    Migration{12, "lease: which daemon is active, and its fencing epoch", kLeaseSchema},
    Migration{13, "checks as comparisons: no temporary table per row written", kChecksAsComparisonsSchema},
    Migration{14, "cluster history: a sample of the whole cluster every minute", kClusterHistorySchema},
    Migration{15, "cluster identity: a name of the cluster's own for its directories and job uids", kClusterIdentitySchema},
};

bool has_version_table(sqlite::Connection& db) {
  return db.query_text("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").has_value();
}

}  // namespace

std::span<const Migration> schema_migrations() { return kMigrations; }

int latest_schema_version() { return kMigrations.back().version; }

int recorded_schema_version(sqlite::Connection& db) {
  if (!has_version_table(db)) return 0;
  return std::stoi(db.query_text("SELECT COALESCE(MAX(version), 0) FROM schema_version").value_or("0"));
}

int migrate(sqlite::Connection& db, std::span<const Migration> migrations) {
  db.exec(
      "CREATE TABLE IF NOT EXISTS schema_version ("
      " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
  const int known = migrations.empty() ? 0 : migrations.back().version;
  int version = recorded_schema_version(db);
  if (version > known) {
    throw StoreError(db.file().string() + ": schema version " + std::to_string(version) +
                     " is newer than this build supports (" + std::to_string(known) +
                     "); run a newer trainyard-daemon or restore a backup");
  }
  for (const Migration& step : migrations) {
    assert(step.version == (&step - migrations.data()) + 1 && "migrations are numbered 1, 2, 3, ... in order");
    if (step.version <= version) continue;
    sqlite::Transaction tx(db);
    db.exec(step.sql);
    sqlite::Statement record(db, "INSERT INTO schema_version (version, name, applied_at) "
                                 "VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
    sqlite::Statement::Use(record).bind_int(1, step.version).bind_text(2, step.name).run();
    tx.commit();
    version = step.version;
    spdlog::info("store.migrated file={} version={} name=\"{}\"", db.file().string(), step.version, step.name);
  }
  return version;
}

}  // namespace trainyard::store
