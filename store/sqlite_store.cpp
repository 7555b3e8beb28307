#include "store/sqlite_store.h"

#include <spdlog/spdlog.h>

#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "proto/text.h"
#include "store/rows.h"
#include "store/schema.h"

namespace trainyard::store {
namespace {

using sqlite::Statement;
using Use = sqlite::Statement::Use;

// A writer waits this long for another connection's lock (an operator's sqlite3 shell, a backup)
// before the commit fails.
constexpr int kBusyTimeoutMs = 5000;

using namespace rows;  // the row readers, shared with PostgresStore

template <class Read>
auto all_rows(Statement& statement, Read read) {
  Use use(statement);
  std::vector<decltype(read(use))> out;
  while (use.next_row()) out.push_back(read(use));
  return out;
}

std::int64_t single_int(Statement& statement) {
  Use use(statement);
  return use.next_row() ? use.int_at(0) : 0;
}

// Bits of `JobQuery` that pick one of the cached `jobs(...)` statements.
constexpr unsigned kByState = 1, kByShare = 2, kByUser = 4, kBeforeId = 8, kAfterId = 16, kSince = 32, kUntil = 64;
// States are bound to ?1..?8; the slots left unbound are NULL, which `IN` never matches.
constexpr std::size_t kStateSlots = 8;

unsigned filters_of(const JobQuery& q) {
  return (q.states.empty() ? 0 : kByState) | (q.share ? kByShare : 0) | (q.user ? kByUser : 0) |
         (q.before_id ? kBeforeId : 0) | (q.after_id ? kAfterId : 0) | (q.submitted_since ? kSince : 0) |
         (q.submitted_until ? kUntil : 0);
}

// One statement per combination of filters rather than `(?1 IS NULL OR state = ?1)`, which would
// keep SQLite from using the (state, id), (share, id) and (user, id) indexes.
std::string job_query_sql(unsigned filters) {
  std::string sql = "SELECT record FROM jobs WHERE 1";
  if (filters & kByState) sql += " AND state IN (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
  if (filters & kByShare) sql += " AND share = ?9";
  if (filters & kByUser) sql += " AND user = ?10";
  if (filters & kBeforeId) sql += " AND id < ?11";
  if (filters & kAfterId) sql += " AND id > ?12";
  if (filters & kSince) sql += " AND submitted_at_ms >= ?13";
  if (filters & kUntil) sql += " AND submitted_at_ms < ?14";
  return sql + " ORDER BY id DESC LIMIT ?15";
}

}  // namespace

// Where each job and attempt of a group commit is first and last changed, as (change, position).
// A row changed several times in one transaction (a trivial job's start and exit arrive together,
// a placement and its attempt) is written once: where it first appears, so rows that reference it
// still come after it, with what it is last, since an upsert replaces the whole row. Each write of
// a row costs its upsert and the index entries it moves.
class SqliteStore::RowWrites {
 public:
  struct At {
    std::size_t change = 0;
    std::size_t position = 0;
    bool operator==(const At&) const = default;
  };
  struct Span {
    At first, last;
  };

  explicit RowWrites(std::span<const Change> batch) {
    for (std::size_t c = 0; c < batch.size(); ++c) {
      note(jobs_, batch[c].jobs, c, [](const Job& j) { return j.id; });
      note(attempts_, batch[c].attempts, c, [](const Attempt& a) { return a.id; });
    }
  }
  // The job's last change when (change, position) is where it is written, else none.
  std::optional<At> job_write(JobId id, At at) const { return write_at(jobs_, id, at); }
  std::optional<At> attempt_write(AttemptId id, At at) const { return write_at(attempts_, id, at); }

 private:
  using Spans = std::unordered_map<std::int64_t, Span>;
  template <class Row, class IdOf>
  static void note(Spans& spans, const std::vector<Row>& rows, std::size_t change, IdOf id_of) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const At at{change, i};
      auto [it, fresh] = spans.try_emplace(id_of(rows[i]), Span{at, at});
      if (!fresh) it->second.last = at;
    }
  }
  static std::optional<At> write_at(const Spans& spans, std::int64_t id, At at) {
    const Span& span = spans.at(id);
    if (!(span.first == at)) return std::nullopt;
    return span.last;
  }

  Spans jobs_, attempts_;
};

struct SqliteStore::Statements {
  explicit Statements(sqlite::Connection& db)
      : upsert_job(db,
                   "INSERT INTO jobs (id, user, share, state, priority, submitted_at_ms, record)"
                   " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO UPDATE SET"
                   " user = excluded.user, share = excluded.share, state = excluded.state,"
                   " priority = excluded.priority, submitted_at_ms = excluded.submitted_at_ms,"
                   " record = excluded.record"),
        upsert_attempt(db,
                       "INSERT INTO attempts (id, job_id, number, state, record, ended_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
                       " ON CONFLICT (id) DO UPDATE SET job_id = excluded.job_id, number = excluded.number,"
                       " state = excluded.state, record = excluded.record, ended_at_ms = excluded.ended_at_ms"),
        upsert_node(db,
                    "INSERT INTO nodes (name, state, record) VALUES (?1, ?2, ?3)"
                    " ON CONFLICT (name) DO UPDATE SET state = excluded.state, record = excluded.record"),
        upsert_token(db,
                     "INSERT INTO tokens (hash, user, role, created_at_ms, id, expires_at_ms, last_used_at_ms)"
                     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (hash) DO UPDATE SET user = excluded.user,"
                     " role = excluded.role, created_at_ms = excluded.created_at_ms, id = excluded.id,"
                     " expires_at_ms = excluded.expires_at_ms, last_used_at_ms = excluded.last_used_at_ms"),
        delete_token(db, "DELETE FROM tokens WHERE hash = ?1"),
        note_token_use(db, "UPDATE tokens SET last_used_at_ms = ?2 WHERE hash = ?1"),
        upsert_share(db,
                     "INSERT INTO shares (name, weight, max_running_cores, usage_core_s, usage_at_ms, created, members,"
                     " storage_limit_mb) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (name) DO UPDATE SET"
                     " weight = excluded.weight, max_running_cores = excluded.max_running_cores,"
                     " usage_core_s = excluded.usage_core_s, usage_at_ms = excluded.usage_at_ms, created = excluded.created,"
                     " members = excluded.members, storage_limit_mb = excluded.storage_limit_mb"),
        delete_share(db, "DELETE FROM shares WHERE name = ?1"),
        append_event(db,
                     "INSERT INTO events (at_ms, kind, job_id, attempt_id, node, message, severity, user, share, details)"
                     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
        upsert_metric(db,
                      "INSERT OR REPLACE INTO metrics (job_id, attempt_id, step, loss, grad_norm, param_norm, lr,"
                      " samples_per_s, spike, spike_steps_to_return) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
        metrics_of_job(db,
                       "SELECT job_id, attempt_id, step, loss, grad_norm, param_norm, lr, samples_per_s, spike,"
                       " spike_steps_to_return FROM metrics WHERE job_id = ?1 ORDER BY step, attempt_id"),
        upsert_health_check(db, "INSERT OR REPLACE INTO health_checks (id, kind, created_at_ms, record) VALUES (?1, ?2, ?3, ?4)"),
        upsert_node_health(db,
                           "INSERT OR REPLACE INTO node_health (node, check_id, at_ms, state, record)"
                           " VALUES (?1, ?2, ?3, ?4, ?5)"),
        health_check_by_id(db, "SELECT id, kind, created_at_ms, record FROM health_checks WHERE id = ?1"),
        recent_health_checks(db, "SELECT id, kind, created_at_ms, record FROM health_checks WHERE id < ?1 ORDER BY id DESC LIMIT ?2"),
        node_health_of(db,
                       "SELECT node, check_id, at_ms, state, record FROM node_health WHERE node = ?1 AND check_id < ?2"
                       " ORDER BY check_id DESC LIMIT ?3"),
        upsert_checkpoint(db,
                          "INSERT OR REPLACE INTO checkpoints (job_id, step, attempt_id, manifest_sha256, recorded_at_ms)"
                          " VALUES (?1, ?2, ?3, ?4, ?5)"),
        checkpoints_of_job(db,
                           "SELECT job_id, step, attempt_id, manifest_sha256, recorded_at_ms FROM checkpoints"
                           " WHERE job_id = ?1 ORDER BY step"),
        max_health_check_id(db, "SELECT COALESCE(MAX(id), 0) FROM health_checks"),
        upsert_cluster_sample(db, "INSERT OR REPLACE INTO cluster_samples (at_ms, record) VALUES (?1, ?2)"),
        prune_cluster_samples(db, "DELETE FROM cluster_samples WHERE at_ms < ?1"),
        cluster_samples_since(db, "SELECT at_ms, record FROM cluster_samples WHERE at_ms >= ?1 ORDER BY at_ms"),
        job_by_id(db, "SELECT record FROM jobs WHERE id = ?1"),
        attempts_of_job(db, "SELECT record FROM attempts WHERE job_id = ?1 ORDER BY id"),
        // The ids as one JSON array: one prepared statement for any number of jobs.
        attempts_of_jobs(db,
                         "SELECT record FROM attempts WHERE job_id IN (SELECT value FROM json_each(?1))"
                         " ORDER BY job_id, id"),
        attempt_by_id(db, "SELECT record FROM attempts WHERE id = ?1"),
        // Two index lookups (attempts_by_end for both terms), not a scan of every attempt.
        attempts_since(db,
                       "SELECT record FROM attempts WHERE job_id < ?2 AND (ended_at_ms IS NULL OR ended_at_ms >= ?1)"
                       " ORDER BY job_id DESC, id DESC LIMIT ?3"),
        node_by_name(db, "SELECT record FROM nodes WHERE name = ?1"),
        token_by_hash(db, "SELECT " + std::string(kTokenColumns) + " FROM tokens WHERE hash = ?1"),
        all_tokens(db, "SELECT " + std::string(kTokenColumns) + " FROM tokens ORDER BY created_at_ms, hash"),
        events_after(db,
                     "SELECT " + std::string(kEventColumns) + " FROM events"
                     " WHERE seq > ?1 ORDER BY seq LIMIT ?2"),
        events_before(db,
                      "SELECT " + std::string(kEventColumns) + " FROM events"
                      " WHERE seq < ?1 ORDER BY seq DESC LIMIT ?2"),
        // substr rather than LIKE: a prefix holding % or _ matches only itself.
        events_of_kind(db,
                       "SELECT " + std::string(kEventColumns) + " FROM events"
                       " WHERE seq > ?1 AND substr(kind, 1, length(?2)) = ?2 ORDER BY seq LIMIT ?3"),
        // RETURNING to count them; the events_by_time index finds the old ones.
        prune_events(db, "DELETE FROM events WHERE at_ms < ?1 AND seq < ?2 RETURNING seq"),
        // A finished delivery goes with its events (nothing is left to re-send); a webhook's newest
        // row stays, because the next delivery's number is counted on from it.
        prune_deliveries(db,
                         "DELETE FROM webhook_deliveries WHERE state IN ('delivered','dead')"
                         " AND last_seq < COALESCE((SELECT MIN(seq) FROM events), 9223372036854775807)"
                         " AND n < (SELECT MAX(n) FROM webhook_deliveries AS newest"
                         " WHERE newest.webhook_id = webhook_deliveries.webhook_id)"),
        active_jobs(db, "SELECT record FROM jobs WHERE state IN ('PENDING', 'STARTING', 'RUNNING') ORDER BY id"),
        active_attempts(db, "SELECT record FROM attempts WHERE state IN ('STARTING', 'RUNNING') ORDER BY id"),
        all_nodes(db, "SELECT record FROM nodes ORDER BY name"),
        all_shares(db,
                   "SELECT name, weight, max_running_cores, usage_core_s, usage_at_ms, created, members, storage_limit_mb"
                   " FROM shares ORDER BY name"),
        max_job_id(db, "SELECT COALESCE(MAX(id), 0) FROM jobs"),
        max_attempt_id(db, "SELECT COALESCE(MAX(id), 0) FROM attempts"),
        upsert_webhook(db,
                       "INSERT OR REPLACE INTO webhooks (" + std::string(kWebhookColumns) +
                           ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
        // INSERT OR REPLACE would delete the webhook's deliveries through the cascade.
        upsert_delivery(db,
                        "INSERT INTO webhook_deliveries (" + std::string(kDeliveryColumns) +
                            ") SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = ?1)"
                            " ON CONFLICT (webhook_id, n) DO UPDATE SET first_seq = excluded.first_seq,"
                            " last_seq = excluded.last_seq, state = excluded.state, attempts = excluded.attempts,"
                            " first_attempt_at_ms = excluded.first_attempt_at_ms,"
                            " next_attempt_at_ms = excluded.next_attempt_at_ms, log = excluded.log"),
        move_webhook_cursor(db, "UPDATE webhooks SET cursor_seq = ?2 WHERE id = ?1"),
        delete_webhook(db, "DELETE FROM webhooks WHERE id = ?1"),
        all_webhooks(db, "SELECT " + std::string(kWebhookColumns) + " FROM webhooks ORDER BY id"),
        max_webhook_id(db,
                       "SELECT MAX(COALESCE((SELECT MAX(id) FROM webhooks), 0),"
                       " COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'webhooks'), 0))"),
        deliveries_of(db,
                      "SELECT " + std::string(kDeliveryColumns) + " FROM webhook_deliveries"
                      " WHERE webhook_id = ?1 AND n < ?2 ORDER BY n DESC LIMIT ?3"),
        open_deliveries_of(db,
                           "SELECT " + std::string(kDeliveryColumns) + " FROM webhook_deliveries"
                           " WHERE webhook_id = ?1 AND state IN ('pending','retrying') ORDER BY n"),
        last_event(db, "SELECT COALESCE(MAX(seq), 0) FROM events"),
        webhooks_keep_from(db,
                           "SELECT MIN(seq) FROM (SELECT cursor_seq + 1 AS seq FROM webhooks UNION ALL"
                           " SELECT first_seq FROM webhook_deliveries WHERE state IN ('pending','retrying'))") {}

  Statement upsert_job, upsert_attempt, upsert_node, upsert_token, delete_token, note_token_use, upsert_share, delete_share,
      append_event, upsert_metric;
  Statement metrics_of_job, upsert_health_check, upsert_node_health, health_check_by_id, recent_health_checks,
      node_health_of;
  Statement upsert_checkpoint, checkpoints_of_job, max_health_check_id;
  Statement upsert_cluster_sample, prune_cluster_samples, cluster_samples_since;
  Statement job_by_id, attempts_of_job, attempts_of_jobs, attempt_by_id, attempts_since, node_by_name, token_by_hash, all_tokens, events_after, events_before,
      events_of_kind;
  Statement prune_events, prune_deliveries, active_jobs, active_attempts, all_nodes, all_shares, max_job_id, max_attempt_id;
  Statement upsert_webhook, upsert_delivery, move_webhook_cursor, delete_webhook, all_webhooks, max_webhook_id;
  Statement deliveries_of, open_deliveries_of, last_event, webhooks_keep_from;
  std::map<unsigned, Statement> job_queries;  // by filter bits, prepared on first use
};

SqliteStore::SqliteStore(const std::filesystem::path& file) : db_(file) {
  db_.exec("PRAGMA busy_timeout = " + std::to_string(kBusyTimeoutMs));
  const std::string journal = db_.query_text("PRAGMA journal_mode = WAL").value_or("");
  if (journal != "wal") spdlog::warn("store.no_wal file={} journal_mode={}", file.string(), journal);
  // FULL: fsync the WAL on every commit; NORMAL would let the last commits vanish on power loss.
  db_.exec("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON");
  // A big page cache keeps the index pages of a large job table in memory (queries, upserts);
  // the size limit gives back the disk a burst of submissions grew the WAL to, once checkpointed.
  db_.exec("PRAGMA cache_size = -65536; PRAGMA journal_size_limit = 67108864");
  const int version = migrate(db_, schema_migrations());
  statements_ = std::make_unique<Statements>(db_);
  spdlog::info("store.opened file={} schema_version={} journal_mode={} synchronous=FULL", file.string(), version,
               journal);
}

SqliteStore::~SqliteStore() = default;

void SqliteStore::commit(std::span<const Change> batch) {
  if (batch.empty()) return;
  try {
    sqlite::Transaction tx(db_);
    const RowWrites rows_written(batch);
    for (std::size_t c = 0; c < batch.size(); ++c) write(batch, c, rows_written);
    tx.commit();
  } catch (const std::exception& e) {
    // The transaction guard has rolled everything back by now.
    spdlog::warn("store.commit_failed changes={} error=\"{}\"", batch.size(), e.what());
    if (dynamic_cast<const StoreError*>(&e)) throw;
    throw StoreError(std::string("commit: ") + e.what());
  }
}

void SqliteStore::write(std::span<const Change> batch, std::size_t index, const RowWrites& rows_written) {
  Statements& s = *statements_;
  const Change& change = batch[index];
  std::string scratch;
  for (std::size_t i = 0; i < change.jobs.size(); ++i) {
    const auto last = rows_written.job_write(change.jobs[i].id, {index, i});
    if (!last) continue;
    const Change& latest = batch[last->change];
    const Job& j = latest.jobs[last->position];
    Use(s.upsert_job)
        .bind_int(1, j.id)
        .bind_text(2, j.user)
        .bind_text(3, j.spec.share)
        .bind_text(4, to_string(j.state))
        .bind_int(5, j.spec.priority)
        .bind_int(6, to_unix_ms(j.submitted_at))
        .bind_text(7, job_record_of(latest, last->position, scratch))
        .run();
  }
  for (std::size_t i = 0; i < change.attempts.size(); ++i) {
    const auto last = rows_written.attempt_write(change.attempts[i].id, {index, i});
    if (!last) continue;
    const Attempt& a = batch[last->change].attempts[last->position];
    Use(s.upsert_attempt)
        .bind_int(1, a.id)
        .bind_int(2, a.job_id)
        .bind_int(3, a.number)
        .bind_text(4, to_string(a.state))
        .bind_text(5, attempt_record(a))
        .bind_optional_int(6, a.ended_at ? std::optional(to_unix_ms(*a.ended_at)) : std::nullopt)
        .run();
  }
  for (const Node& n : change.nodes) {
    Use(s.upsert_node).bind_text(1, n.name).bind_text(2, to_string(n.state)).bind_text(3, record_text(to_json(n))).run();
  }
  for (const TokenRecord& t : change.tokens) {
    Use(s.upsert_token)
        .bind_text(1, t.hash)
        .bind_text(2, t.user)
        .bind_text(3, to_string(t.role))
        .bind_int(4, to_unix_ms(t.created_at))
        .bind_text(5, t.id)
        .bind_optional_int(6, t.expires_at ? std::optional(to_unix_ms(*t.expires_at)) : std::nullopt)
        .bind_optional_int(7, t.last_used_at ? std::optional(to_unix_ms(*t.last_used_at)) : std::nullopt)
        .run();
  }
  for (const std::string& hash : change.revoked_tokens) Use(s.delete_token).bind_text(1, hash).run();
  for (const auto& [hash, at] : change.token_uses) Use(s.note_token_use).bind_text(1, hash).bind_int(2, to_unix_ms(at)).run();
  for (const ShareRecord& sh : change.shares) {
    Use use(s.upsert_share);
    use
        .bind_text(1, sh.name)
        .bind_real(2, sh.weight)
        .bind_optional_int(3, sh.max_running_cores)
        .bind_real(4, sh.usage_core_s)
        .bind_int(5, to_unix_ms(sh.usage_at))
        .bind_int(6, sh.created ? 1 : 0);
    if (sh.members) {
      use.bind_text(7, json_text(Json(*sh.members)));
    } else {
      use.bind_null(7);
    }
    use.bind_optional_int(8, sh.storage_limit_mb);
    use.run();
  }
  for (const std::string& name : change.deleted_shares) Use(s.delete_share).bind_text(1, name).run();
  for (const Event& e : change.events) {
    Use(s.append_event)
        .bind_int(1, to_unix_ms(e.at))
        .bind_text(2, e.kind)
        .bind_optional_int(3, e.job_id)
        .bind_optional_int(4, e.attempt_id)
        .bind_text(5, e.node)
        .bind_text(6, e.message)
        .bind_text(7, to_string(e.severity))
        .bind_text(8, e.user)
        .bind_text(9, e.share)
        .bind_text(10, record_text(e.details))
        .run();
  }
  for (const HealthCheckRow& h : change.health_checks) {
    Use(s.upsert_health_check)
        .bind_int(1, h.id)
        .bind_text(2, h.kind)
        .bind_int(3, to_unix_ms(h.created_at))
        .bind_text(4, record_text(h.record))
        .run();
  }
  for (const NodeHealthRow& h : change.node_health) {
    Use(s.upsert_node_health)
        .bind_text(1, h.node)
        .bind_int(2, h.check_id)
        .bind_int(3, to_unix_ms(h.at))
        .bind_text(4, h.state)
        .bind_text(5, record_text(h.record))
        .run();
  }
  for (const MetricRecord& m : change.metrics) {
    Use(s.upsert_metric)
        .bind_int(1, m.job_id)
        .bind_int(2, m.attempt_id)
        .bind_int(3, m.metric.step)
        .bind_real(4, m.metric.loss)
        .bind_real(5, m.metric.grad_norm)
        .bind_real(6, m.metric.param_norm)
        .bind_real(7, m.metric.lr)
        .bind_real(8, m.metric.samples_per_s)
        .bind_int(9, m.metric.spike ? 1 : 0)
        .bind_optional_int(10, m.metric.spike_steps_to_return)
        .run();
  }
  for (const CheckpointRecord& c : change.checkpoints) {
    Use(s.upsert_checkpoint)
        .bind_int(1, c.job_id)
        .bind_int(2, c.step)
        .bind_int(3, c.attempt_id)
        .bind_text(4, c.manifest_sha256)
        .bind_int(5, to_unix_ms(c.recorded_at))
        .run();
  }
  for (const ClusterSampleRow& c : change.cluster_samples) {
    Use(s.upsert_cluster_sample).bind_int(1, to_unix_ms(c.at)).bind_text(2, record_text(c.record)).run();
  }
  if (change.cluster_samples_kept_from) {
    Use(s.prune_cluster_samples).bind_int(1, to_unix_ms(*change.cluster_samples_kept_from)).run();
  }
  write_webhooks(change);
}

void SqliteStore::write_webhooks(const Change& change) {
  Statements& s = *statements_;
  for (const WebhookRecord& w : change.webhooks) {
    Use(s.upsert_webhook)
        .bind_int(1, w.id)
        .bind_text(2, w.owner)
        .bind_int(3, to_unix_ms(w.created_at))
        .bind_text(4, w.url)
        .bind_text(5, record_text(Json(w.events)))
        .bind_text(6, w.format)
        .bind_text(7, record_text(w.filter))
        .bind_text(8, w.secret)
        .bind_int(9, w.cursor_seq)
        .bind_int(10, w.restricted ? 1 : 0)
        .run();
  }
  for (const WebhookDelivery& d : change.webhook_deliveries) {
    Use(s.upsert_delivery)
        .bind_int(1, d.webhook_id)
        .bind_int(2, d.n)
        .bind_int(3, d.first_seq)
        .bind_int(4, d.last_seq)
        .bind_text(5, to_string(d.state))
        .bind_int(6, d.attempts)
        .bind_int(7, to_unix_ms(d.first_attempt_at))
        .bind_optional_int(8, d.next_attempt_at ? std::optional(to_unix_ms(*d.next_attempt_at)) : std::nullopt)
        .bind_text(9, record_text(d.log))
        .run();
  }
  for (const auto& [id, seq] : change.webhook_cursors) Use(s.move_webhook_cursor).bind_int(1, id).bind_int(2, seq).run();
  for (std::int64_t id : change.deleted_webhooks) Use(s.delete_webhook).bind_int(1, id).run();
}

LoadedState SqliteStore::load() {
  Statements& s = *statements_;
  LoadedState state;
  state.active_jobs = all_rows(s.active_jobs, job_at);
  state.active_attempts = all_rows(s.active_attempts, attempt_at);
  state.nodes = all_rows(s.all_nodes, node_at);
  state.shares = all_rows(s.all_shares, share_at);
  state.max_job_id = single_int(s.max_job_id);
  state.max_attempt_id = single_int(s.max_attempt_id);
  state.max_health_check_id = single_int(s.max_health_check_id);
  state.webhooks = all_rows(s.all_webhooks, webhook_at);
  state.max_webhook_id = single_int(s.max_webhook_id);
  return state;
}

std::optional<Job> SqliteStore::job(JobId id) {
  Use use(statements_->job_by_id);
  use.bind_int(1, id);
  if (!use.next_row()) return std::nullopt;
  return job_at(use);
}

sqlite::Statement& SqliteStore::job_query_for(const JobQuery& query) {
  const unsigned filters = filters_of(query);
  auto& cache = statements_->job_queries;
  auto it = cache.find(filters);
  if (it == cache.end()) it = cache.emplace(filters, Statement(db_, job_query_sql(filters))).first;
  return it->second;
}

std::vector<Job> SqliteStore::jobs(const JobQuery& query) {
  Use use(job_query_for(query));
  if (query.states.size() > kStateSlots) throw std::invalid_argument("JobQuery: more states than the statement binds");
  for (std::size_t i = 0; i < query.states.size(); ++i)
    use.bind_text(static_cast<int>(i + 1), to_string(query.states[i]));
  if (query.share) use.bind_text(9, *query.share);
  if (query.user) use.bind_text(10, *query.user);
  if (query.before_id) use.bind_int(11, *query.before_id);
  if (query.after_id) use.bind_int(12, *query.after_id);
  if (query.submitted_since) use.bind_int(13, to_unix_ms(*query.submitted_since));
  if (query.submitted_until) use.bind_int(14, to_unix_ms(*query.submitted_until));
  use.bind_int(15, query.limit);
  std::vector<Job> out;
  while (use.next_row()) out.push_back(job_at(use));
  return out;
}

std::vector<Attempt> SqliteStore::attempts_of(JobId job) {
  Use use(statements_->attempts_of_job);
  use.bind_int(1, job);
  std::vector<Attempt> out;
  while (use.next_row()) out.push_back(attempt_at(use));
  return out;
}

std::vector<Attempt> SqliteStore::attempts_of_jobs(std::span<const JobId> jobs) {
  Use use(statements_->attempts_of_jobs);
  use.bind_text(1, json_text(Json(std::vector<JobId>(jobs.begin(), jobs.end()))));
  std::vector<Attempt> out;
  while (use.next_row()) out.push_back(attempt_at(use));
  return out;
}

std::vector<Attempt> SqliteStore::attempts_running_since(TimePoint from, JobId before_job, int limit) {
  Use use(statements_->attempts_since);
  use.bind_int(1, to_unix_ms(from));
  use.bind_int(2, before_job);
  use.bind_int(3, limit);
  std::vector<Attempt> out;
  while (use.next_row()) out.push_back(attempt_at(use));
  return out;
}

std::optional<Attempt> SqliteStore::attempt(AttemptId id) {
  Use use(statements_->attempt_by_id);
  use.bind_int(1, id);
  if (!use.next_row()) return std::nullopt;
  return attempt_at(use);
}

std::optional<Node> SqliteStore::node(const std::string& name) {
  Use use(statements_->node_by_name);
  use.bind_text(1, name);
  if (!use.next_row()) return std::nullopt;
  return node_at(use);
}

std::optional<TokenRecord> SqliteStore::token_by_hash(const std::string& hash) {
  Use use(statements_->token_by_hash);
  use.bind_text(1, hash);
  if (!use.next_row()) return std::nullopt;
  return token_at(use);
}

std::vector<TokenRecord> SqliteStore::tokens() { return all_rows(statements_->all_tokens, token_at); }

std::vector<MetricRecord> SqliteStore::metrics_of(JobId job) {
  Use use(statements_->metrics_of_job);
  use.bind_int(1, job);
  std::vector<MetricRecord> out;
  while (use.next_row()) out.push_back(metric_at(use));
  return out;
}

std::vector<CheckpointRecord> SqliteStore::checkpoints_of(JobId job) {
  Use use(statements_->checkpoints_of_job);
  use.bind_int(1, job);
  std::vector<CheckpointRecord> out;
  while (use.next_row()) out.push_back(checkpoint_at(use));
  return out;
}

std::optional<HealthCheckRow> SqliteStore::health_check(std::int64_t id) {
  Use use(statements_->health_check_by_id);
  use.bind_int(1, id);
  if (!use.next_row()) return std::nullopt;
  return health_check_at(use);
}

std::vector<HealthCheckRow> SqliteStore::recent_health_checks(std::int64_t before_id, int limit) {
  Use use(statements_->recent_health_checks);
  use.bind_int(1, before_id).bind_int(2, limit);
  std::vector<HealthCheckRow> out;
  while (use.next_row()) out.push_back(health_check_at(use));
  return out;
}

std::vector<NodeHealthRow> SqliteStore::node_health(const std::string& node, std::int64_t before_check_id, int limit) {
  Use use(statements_->node_health_of);
  use.bind_text(1, node).bind_int(2, before_check_id).bind_int(3, limit);
  std::vector<NodeHealthRow> out;
  while (use.next_row()) out.push_back(node_health_at(use));
  return out;
}

std::vector<ClusterSampleRow> SqliteStore::cluster_samples_since(TimePoint from) {
  Use use(statements_->cluster_samples_since);
  use.bind_int(1, to_unix_ms(from));
  std::vector<ClusterSampleRow> out;
  while (use.next_row()) out.push_back(cluster_sample_at(use));
  return out;
}

std::vector<Event> SqliteStore::events_after(std::int64_t seq, int limit) {
  Use use(statements_->events_after);
  use.bind_int(1, seq).bind_int(2, limit);
  std::vector<Event> out;
  while (use.next_row()) out.push_back(event_at(use));
  return out;
}

std::vector<Event> SqliteStore::events_before(std::int64_t seq, int limit) {
  Use use(statements_->events_before);
  use.bind_int(1, seq).bind_int(2, limit);
  std::vector<Event> out;
  while (use.next_row()) out.push_back(event_at(use));
  return out;
}

std::vector<Event> SqliteStore::events_of_kind(const std::string& kind_prefix, std::int64_t seq, int limit) {
  Use use(statements_->events_of_kind);
  use.bind_int(1, seq).bind_text(2, kind_prefix).bind_int(3, limit);
  std::vector<Event> out;
  while (use.next_row()) out.push_back(event_at(use));
  return out;
}

std::int64_t SqliteStore::prune_events(TimePoint older_than, std::int64_t keep_from_seq) {
  sqlite::Transaction tx(db_);
  std::int64_t pruned = 0;
  {
    Use use(statements_->prune_events);
    use.bind_int(1, to_unix_ms(older_than)).bind_int(2, keep_from_seq);
    while (use.next_row()) ++pruned;
  }
  Use(statements_->prune_deliveries).run();
  tx.commit();
  return pruned;
}

std::int64_t SqliteStore::last_event_seq() { return single_int(statements_->last_event); }

std::vector<WebhookDelivery> SqliteStore::webhook_deliveries(std::int64_t webhook_id, std::optional<std::int64_t> before_n,
                                                             int limit) {
  Use use(statements_->deliveries_of);
  use.bind_int(1, webhook_id).bind_int(2, before_n.value_or(std::numeric_limits<std::int64_t>::max())).bind_int(3, limit);
  std::vector<WebhookDelivery> out;
  while (use.next_row()) out.push_back(delivery_at(use));
  return out;
}

std::vector<WebhookDelivery> SqliteStore::open_webhook_deliveries(std::int64_t webhook_id) {
  Use use(statements_->open_deliveries_of);
  use.bind_int(1, webhook_id);
  std::vector<WebhookDelivery> out;
  while (use.next_row()) out.push_back(delivery_at(use));
  return out;
}

std::optional<std::int64_t> SqliteStore::webhooks_keep_from_seq() {
  Use use(statements_->webhooks_keep_from);
  if (!use.next_row() || use.is_null_at(0)) return std::nullopt;
  return use.int_at(0);
}

int SqliteStore::schema_version() { return recorded_schema_version(db_); }

std::string SqliteStore::cluster_name() { return db_.query_text("SELECT name FROM cluster_identity").value_or(""); }

}  // namespace trainyard::store
