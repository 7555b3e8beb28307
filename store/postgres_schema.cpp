#include "store/postgres_schema.h"

#include <spdlog/spdlog.h>

#include <array>
#include <cassert>
#include <string>

#include "store/store.h"

namespace trainyard::store {
// Named apart from schema.cpp's SQLite statements, which use the same names in the same library.
namespace {
namespace postgres_ddl {

// The steps of store/schema.cpp, step for step; see there for why each exists. Differences of
// dialect: BIGINT ids and times, DOUBLE PRECISION (which keeps NaN), BIGSERIAL
// where SQLite has AUTOINCREMENT, constraints changed in place rather than by copying a table,
// "user" quoted (a reserved word here). Names that lists are ordered by are COLLATE "C", so the
// order is the bytes', as in SQLite, whatever locale the database was created with.
constexpr std::string_view kInitialSchema = R"sql(
CREATE TABLE jobs (
  id BIGINT PRIMARY KEY,
  "user" TEXT NOT NULL,
  share TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('PENDING','STARTING','RUNNING','SUCCEEDED','FAILED','CANCELLED')),
  priority BIGINT NOT NULL,
  submitted_at_ms BIGINT NOT NULL,
  record TEXT NOT NULL
);
CREATE INDEX jobs_by_state ON jobs (state, id);
CREATE INDEX jobs_by_share ON jobs (share, id);
CREATE INDEX jobs_by_user ON jobs ("user", id);

CREATE TABLE attempts (
  id BIGINT PRIMARY KEY,
  job_id BIGINT NOT NULL REFERENCES jobs (id),
  number BIGINT NOT NULL,
  state TEXT NOT NULL CONSTRAINT attempts_state_check
    CHECK (state IN ('STARTING','RUNNING','SUCCEEDED','FAILED','CANCELLED')),
  record TEXT NOT NULL
);
CREATE INDEX attempts_by_job ON attempts (job_id, id);
CREATE INDEX attempts_by_state ON attempts (state, id);

CREATE TABLE nodes (
  name TEXT COLLATE "C" PRIMARY KEY,
  state TEXT NOT NULL CHECK (state IN ('HEALTHY','SUSPECT','UNHEALTHY','DRAINED','DOWN')),
  record TEXT NOT NULL
);

CREATE TABLE tokens (
  hash TEXT COLLATE "C" PRIMARY KEY,
  "user" TEXT NOT NULL,
  role TEXT NOT NULL CONSTRAINT tokens_role_check CHECK (role IN ('admin','user','agent')),
  created_at_ms BIGINT NOT NULL
);

CREATE TABLE shares (
  name TEXT COLLATE "C" PRIMARY KEY,
  weight DOUBLE PRECISION NOT NULL,
  max_running_cores BIGINT,
  usage_core_s DOUBLE PRECISION NOT NULL,
  usage_at_ms BIGINT NOT NULL
);

CREATE TABLE events (
  seq BIGSERIAL PRIMARY KEY,
  at_ms BIGINT NOT NULL,
  kind TEXT NOT NULL,
  job_id BIGINT,
  attempt_id BIGINT,
  node TEXT NOT NULL,
  message TEXT NOT NULL
);
)sql";

constexpr std::string_view kMetricsSchema = R"sql(
CREATE TABLE metrics (
  job_id BIGINT NOT NULL,
  attempt_id BIGINT NOT NULL REFERENCES attempts (id),
  step BIGINT NOT NULL,
  loss DOUBLE PRECISION,
  grad_norm DOUBLE PRECISION,
  param_norm DOUBLE PRECISION,
  lr DOUBLE PRECISION,
  samples_per_s DOUBLE PRECISION,
  spike INTEGER NOT NULL,
  spike_steps_to_return BIGINT,
  PRIMARY KEY (job_id, step, attempt_id)
);
)sql";

constexpr std::string_view kHealthSchema = R"sql(
CREATE TABLE health_checks (
  id BIGINT PRIMARY KEY,
  kind TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  record TEXT NOT NULL
);
CREATE TABLE node_health (
  node TEXT NOT NULL,
  check_id BIGINT NOT NULL,
  at_ms BIGINT NOT NULL,
  state TEXT NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (node, check_id)
);
)sql";

constexpr std::string_view kShareAccessSchema = R"sql(
ALTER TABLE shares ADD COLUMN created INTEGER NOT NULL DEFAULT 0;
ALTER TABLE shares ADD COLUMN members TEXT;
UPDATE shares SET created = 1 WHERE name <> 'system' AND (weight <> 1.0 OR max_running_cores IS NOT NULL);
)sql";

constexpr std::string_view kCheckpointsSchema = R"sql(
CREATE TABLE checkpoints (
  job_id BIGINT NOT NULL,
  step BIGINT NOT NULL,
  attempt_id BIGINT NOT NULL REFERENCES attempts (id),
  manifest_sha256 TEXT NOT NULL,
  recorded_at_ms BIGINT NOT NULL,
  PRIMARY KEY (job_id, step)
);
)sql";

constexpr std::string_view kTokenLifecycleSchema = R"sql(
ALTER TABLE tokens ADD COLUMN id TEXT;
UPDATE tokens SET id = 'tok_' || substr(md5(random()::text || hash), 1, 16);
ALTER TABLE tokens ALTER COLUMN id SET NOT NULL;
ALTER TABLE tokens ADD CONSTRAINT tokens_id_key UNIQUE (id);
ALTER TABLE tokens ADD COLUMN expires_at_ms BIGINT;
ALTER TABLE tokens ADD COLUMN last_used_at_ms BIGINT;
ALTER TABLE tokens DROP CONSTRAINT tokens_role_check;
ALTER TABLE tokens ADD CONSTRAINT tokens_role_check CHECK (role IN ('admin','operator','user','viewer','agent'));
)sql";

constexpr std::string_view kEventDetailsSchema = R"sql(
ALTER TABLE events ADD COLUMN severity TEXT NOT NULL DEFAULT 'info' CHECK (severity IN ('info','warning','error'));
ALTER TABLE events ADD COLUMN "user" TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN share TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN details TEXT NOT NULL DEFAULT '{}';
CREATE INDEX events_by_job ON events (job_id, seq) WHERE job_id IS NOT NULL;
CREATE INDEX events_by_time ON events (at_ms);
)sql";

// SQLite's AUTOINCREMENT remembers the highest id ever inserted, deleted rows included; the daemon
// assigns webhook ids itself, so here a one-row table keeps that high-water mark.
constexpr std::string_view kWebhooksSchema = R"sql(
CREATE TABLE webhooks (
  id BIGINT PRIMARY KEY,
  owner TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  format TEXT NOT NULL CHECK (format IN ('slack','json')),
  filter TEXT NOT NULL,
  secret TEXT NOT NULL,
  cursor_seq BIGINT NOT NULL,
  restricted INTEGER NOT NULL
);
CREATE TABLE webhook_id_high_water (id BIGINT NOT NULL);
INSERT INTO webhook_id_high_water VALUES (0);
CREATE TABLE webhook_deliveries (
  webhook_id BIGINT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  n BIGINT NOT NULL,
  first_seq BIGINT NOT NULL,
  last_seq BIGINT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending','delivered','dead','retrying')),
  attempts BIGINT NOT NULL,
  first_attempt_at_ms BIGINT NOT NULL,
  next_attempt_at_ms BIGINT,
  log TEXT NOT NULL,
  PRIMARY KEY (webhook_id, n)
);
CREATE INDEX webhook_deliveries_open ON webhook_deliveries (webhook_id, n) WHERE state IN ('pending','retrying');
)sql";

constexpr std::string_view kAttemptEndSchema = R"sql(
ALTER TABLE attempts ADD COLUMN ended_at_ms BIGINT;
UPDATE attempts SET ended_at_ms = (extract(epoch FROM (record::jsonb ->> 'ended_at')::timestamptz) * 1000)::bigint
  WHERE record::jsonb ->> 'ended_at' IS NOT NULL;
CREATE INDEX attempts_by_end ON attempts (ended_at_ms);
)sql";

constexpr std::string_view kAttemptStopStatesSchema = R"sql(
ALTER TABLE attempts DROP CONSTRAINT attempts_state_check;
ALTER TABLE attempts ADD CONSTRAINT attempts_state_check
  CHECK (state IN ('STARTING','RUNNING','SUCCEEDED','FAILED','CANCELLED','REQUEUED','PREEMPTED'));
)sql";

// Storage quotas per share: the checkpoint and log MiB its jobs may keep together.
constexpr std::string_view kShareStorageSchema = R"sql(
ALTER TABLE shares ADD COLUMN storage_limit_mb BIGINT;
)sql";

// Active / standby: one row says which daemon is active (holder, its URL) until
// when, by the server's clock. Every take-over raises the epoch; the holder's write transactions
// begin with trainyard_fence(its epoch), whose FOR SHARE lock waits out a take-over in progress
// and, under READ COMMITTED, re-checks the epoch on the row it ends with: a paused old holder
// fails there (SQLSTATE TYL01) and commits nothing; a take-over waits until a fenced commit ends.
constexpr std::string_view kLeaseSchema = R"sql(
CREATE TABLE lease (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  holder TEXT NOT NULL,
  epoch BIGINT NOT NULL,
  advertise_url TEXT NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL
);
INSERT INTO lease (id, holder, epoch, advertise_url, expires_at) VALUES (1, '', 0, '', '-infinity');
CREATE FUNCTION trainyard_fence(mine BIGINT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM lease WHERE id = 1 AND epoch = mine FOR SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'lease lost: epoch % is no longer the active daemon''s', mine USING ERRCODE = 'TYL01';
  END IF;
END $$;
)sql";

// SQLite's step 13 rewrites its CHECKs' IN lists as comparisons, because SQLite builds a temporary
// table for such a list on every row written. PostgreSQL tests an IN list in place: nothing to
// change here; the step keeps both histories numbered alike.
constexpr std::string_view kChecksAsComparisonsSchema = "SELECT 1";

constexpr std::string_view kClusterHistorySchema = R"sql(
CREATE TABLE cluster_samples (
  at_ms BIGINT PRIMARY KEY,
  record TEXT NOT NULL
);
)sql";

// As in store/schema.cpp. The cluster's name, made once with its database (Store::cluster_name): it names the directories
// and picks the per-job uids of its jobs on every node, so a new database beside an old one's files,
// or two clusters on one host, never share them. A database that held jobs before this migration
// keeps the empty name, and with it the directories and uids its jobs already have.
constexpr std::string_view kClusterIdentitySchema = R"sql(
CREATE TABLE cluster_identity (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  name TEXT NOT NULL
);
INSERT INTO cluster_identity (id, name)
  SELECT 1, CASE WHEN EXISTS (SELECT 1 FROM jobs) THEN ''
                 ELSE substr(md5(random()::text || clock_timestamp()::text), 1, 16) END;
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

// Any fixed number will do: every Trainyard daemon on the database takes the same one.
constexpr std::int64_t kMigrationLock = 0x747261696e79;  // "trainy"

}  // namespace postgres_ddl
}  // namespace

std::span<const Migration> postgres_schema_migrations() { return postgres_ddl::kMigrations; }

int recorded_schema_version(pg::Connection& db) {
  if (db.query("SELECT to_regclass('schema_version')").is_null(0, 0)) return 0;
  return static_cast<int>(db.query("SELECT COALESCE(MAX(version), 0) FROM schema_version").int_at(0, 0));
}

int migrate(pg::Connection& db, std::span<const Migration> migrations) {
  db.query("SELECT pg_advisory_lock($1)", pg::Params().add(postgres_ddl::kMigrationLock));
  // The lock is the session's: released on every way out, an exception's included.
  struct Unlock {
    pg::Connection& db;
    ~Unlock() {
      try {
        db.query("SELECT pg_advisory_unlock($1)", pg::Params().add(postgres_ddl::kMigrationLock));
      } catch (const std::exception& e) {
        spdlog::warn("store.migration_unlock_failed error=\"{}\"", e.what());
      }
    }
  } unlock{db};
  db.exec(
      "CREATE TABLE IF NOT EXISTS schema_version ("
      " version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())");
  const int known = migrations.empty() ? 0 : migrations.back().version;
  int version = recorded_schema_version(db);
  if (version > known) {
    throw StoreError("postgresql " + db.where() + ": schema version " + std::to_string(version) +
                     " is newer than this build supports (" + std::to_string(known) +
                     "); run a newer trainyard-daemon or restore a backup");
  }
  for (const Migration& step : migrations) {
    assert(step.version == (&step - migrations.data()) + 1 && "migrations are numbered 1, 2, 3, ... in order");
    if (step.version <= version) continue;
    pg::Transaction tx(db);
    db.exec(step.sql);
    db.query("INSERT INTO schema_version (version, name) VALUES ($1, $2)",
             pg::Params().add(step.version).add(step.name));
    tx.commit();
    version = step.version;
    spdlog::info("store.migrated where={} version={} name=\"{}\"", db.where(), step.version, step.name);
  }
  return version;
}

}  // namespace trainyard::store
