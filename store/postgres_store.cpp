#include "store/postgres_store.h"

#include <spdlog/spdlog.h>

#include <vector>
#include <limits>

#include "proto/text.h"
#include "store/postgres_schema.h"
#include "store/rows.h"

namespace trainyard::store {
namespace {

using namespace rows;  // the row readers, shared with SqliteStore
using pg::Params;

std::optional<std::int64_t> ms_or_null(const std::optional<TimePoint>& t) {
  return t ? std::optional(to_unix_ms(*t)) : std::nullopt;
}

struct Prepared {
  const char* name;
  std::string sql;
};

const std::string kLeaseExpiry = "now() + make_interval(secs => $3::float8 / 1000)";

// Takes or renews the lease by `update` and answers (held, epoch, active URL) in one round trip:
// the updated row when it took, else the row as it is, with the URL only while its lease runs.
std::string lease_answer(const std::string& update) {
  return "WITH mine AS (" + update + " RETURNING epoch, advertise_url)"
         " SELECT true, epoch, advertise_url FROM mine UNION ALL"
         " SELECT false, epoch, CASE WHEN expires_at > now() THEN advertise_url ELSE '' END FROM lease"
         " WHERE id = 1 AND NOT EXISTS (SELECT 1 FROM mine)";
}

// Every statement but the job listings (job_query below), prepared once per connection.
std::vector<Prepared> statements() {
  const std::string tokens(kTokenColumns), events(kEventColumns), webhooks(kWebhookColumns),
      deliveries(kDeliveryColumns);
  return {{
      {"upsert_job",
       "INSERT INTO jobs (id, \"user\", share, state, priority, submitted_at_ms, record)"
       " VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO UPDATE SET \"user\" = excluded.\"user\","
       " share = excluded.share, state = excluded.state, priority = excluded.priority,"
       " submitted_at_ms = excluded.submitted_at_ms, record = excluded.record"},
      {"upsert_attempt",
       "INSERT INTO attempts (id, job_id, number, state, record, ended_at_ms) VALUES ($1, $2, $3, $4, $5, $6)"
       " ON CONFLICT (id) DO UPDATE SET job_id = excluded.job_id, number = excluded.number,"
       " state = excluded.state, record = excluded.record, ended_at_ms = excluded.ended_at_ms"},
      {"upsert_node",
       "INSERT INTO nodes (name, state, record) VALUES ($1, $2, $3)"
       " ON CONFLICT (name) DO UPDATE SET state = excluded.state, record = excluded.record"},
      {"upsert_token",
       "INSERT INTO tokens (hash, \"user\", role, created_at_ms, id, expires_at_ms, last_used_at_ms)"
       " VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (hash) DO UPDATE SET \"user\" = excluded.\"user\","
       " role = excluded.role, created_at_ms = excluded.created_at_ms, id = excluded.id,"
       " expires_at_ms = excluded.expires_at_ms, last_used_at_ms = excluded.last_used_at_ms"},
      {"delete_token", "DELETE FROM tokens WHERE hash = $1"},
      {"delete_share", "DELETE FROM shares WHERE name = $1"},
      {"note_token_use", "UPDATE tokens SET last_used_at_ms = $2 WHERE hash = $1"},
      {"upsert_share",
       "INSERT INTO shares (name, weight, max_running_cores, usage_core_s, usage_at_ms, created, members,"
       " storage_limit_mb) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (name) DO UPDATE SET"
       " weight = excluded.weight, max_running_cores = excluded.max_running_cores,"
       " usage_core_s = excluded.usage_core_s, usage_at_ms = excluded.usage_at_ms, created = excluded.created,"
       " members = excluded.members, storage_limit_mb = excluded.storage_limit_mb"},
      {"append_event",
       "INSERT INTO events (at_ms, kind, job_id, attempt_id, node, message, severity, \"user\", share, details)"
       " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"},
      {"upsert_metric",
       "INSERT INTO metrics (job_id, attempt_id, step, loss, grad_norm, param_norm, lr, samples_per_s, spike,"
       " spike_steps_to_return) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
       " ON CONFLICT (job_id, step, attempt_id) DO UPDATE SET loss = excluded.loss, grad_norm = excluded.grad_norm,"
       " param_norm = excluded.param_norm, lr = excluded.lr, samples_per_s = excluded.samples_per_s,"
       " spike = excluded.spike, spike_steps_to_return = excluded.spike_steps_to_return"},
      {"metrics_of_job",
       "SELECT job_id, attempt_id, step, loss, grad_norm, param_norm, lr, samples_per_s, spike,"
       " spike_steps_to_return FROM metrics WHERE job_id = $1 ORDER BY step, attempt_id"},
      {"upsert_health_check",
       "INSERT INTO health_checks (id, kind, created_at_ms, record) VALUES ($1, $2, $3, $4)"
       " ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, created_at_ms = excluded.created_at_ms,"
       " record = excluded.record"},
      {"upsert_node_health",
       "INSERT INTO node_health (node, check_id, at_ms, state, record) VALUES ($1, $2, $3, $4, $5)"
       " ON CONFLICT (node, check_id) DO UPDATE SET at_ms = excluded.at_ms, state = excluded.state,"
       " record = excluded.record"},
      {"health_check_by_id", "SELECT id, kind, created_at_ms, record FROM health_checks WHERE id = $1"},
      {"recent_health_checks",
       "SELECT id, kind, created_at_ms, record FROM health_checks WHERE id < $1 ORDER BY id DESC LIMIT $2"},
      {"node_health_of",
       "SELECT node, check_id, at_ms, state, record FROM node_health WHERE node = $1 AND check_id < $2"
       " ORDER BY check_id DESC LIMIT $3"},
      {"upsert_checkpoint",
       "INSERT INTO checkpoints (job_id, step, attempt_id, manifest_sha256, recorded_at_ms) VALUES ($1, $2, $3, $4, $5)"
       " ON CONFLICT (job_id, step) DO UPDATE SET attempt_id = excluded.attempt_id,"
       " manifest_sha256 = excluded.manifest_sha256, recorded_at_ms = excluded.recorded_at_ms"},
      {"checkpoints_of_job",
       "SELECT job_id, step, attempt_id, manifest_sha256, recorded_at_ms FROM checkpoints WHERE job_id = $1"
       " ORDER BY step"},
      {"max_health_check_id", "SELECT COALESCE(MAX(id), 0) FROM health_checks"},
      {"upsert_cluster_sample",
       "INSERT INTO cluster_samples (at_ms, record) VALUES ($1, $2) ON CONFLICT (at_ms) DO UPDATE SET record = excluded.record"},
      {"prune_cluster_samples", "DELETE FROM cluster_samples WHERE at_ms < $1"},
      {"cluster_samples_since", "SELECT at_ms, record FROM cluster_samples WHERE at_ms >= $1 ORDER BY at_ms"},
      {"job_by_id", "SELECT record FROM jobs WHERE id = $1"},
      {"attempts_of_job", "SELECT record FROM attempts WHERE job_id = $1 ORDER BY id"},
      // The ids as one array literal ("{1,2,3}"): one prepared statement for any number of jobs.
      {"attempts_of_jobs", "SELECT record FROM attempts WHERE job_id = ANY($1::bigint[]) ORDER BY job_id, id"},
      {"attempt_by_id", "SELECT record FROM attempts WHERE id = $1"},
      {"attempts_since",
       "SELECT record FROM attempts WHERE job_id < $2 AND (ended_at_ms IS NULL OR ended_at_ms >= $1)"
       " ORDER BY job_id DESC, id DESC LIMIT $3"},
      {"node_by_name", "SELECT record FROM nodes WHERE name = $1"},
      {"token_by_hash", "SELECT " + tokens + " FROM tokens WHERE hash = $1"},
      {"all_tokens", "SELECT " + tokens + " FROM tokens ORDER BY created_at_ms, hash"},
      {"events_after", "SELECT " + events + " FROM events WHERE seq > $1 ORDER BY seq LIMIT $2"},
      {"events_before", "SELECT " + events + " FROM events WHERE seq < $1 ORDER BY seq DESC LIMIT $2"},
      // starts_with rather than LIKE: a prefix holding % or _ matches only itself.
      {"events_of_kind",
       "SELECT " + events + " FROM events WHERE seq > $1 AND starts_with(kind, $2) ORDER BY seq LIMIT $3"},
      {"prune_events", "DELETE FROM events WHERE at_ms < $1 AND seq < $2"},
      // As SqliteStore's: a finished delivery goes with its events, never a webhook's newest.
      {"prune_deliveries",
       "DELETE FROM webhook_deliveries WHERE state IN ('delivered','dead')"
       " AND last_seq < COALESCE((SELECT MIN(seq) FROM events), 9223372036854775807)"
       " AND n < (SELECT MAX(n) FROM webhook_deliveries AS newest"
       " WHERE newest.webhook_id = webhook_deliveries.webhook_id)"},
      {"active_jobs", "SELECT record FROM jobs WHERE state IN ('PENDING', 'STARTING', 'RUNNING') ORDER BY id"},
      {"active_attempts", "SELECT record FROM attempts WHERE state IN ('STARTING', 'RUNNING') ORDER BY id"},
      {"all_nodes", "SELECT record FROM nodes ORDER BY name"},
      {"all_shares",
       "SELECT name, weight, max_running_cores, usage_core_s, usage_at_ms, created, members, storage_limit_mb"
       " FROM shares ORDER BY name"},
      {"max_job_id", "SELECT COALESCE(MAX(id), 0) FROM jobs"},
      {"max_attempt_id", "SELECT COALESCE(MAX(id), 0) FROM attempts"},
      {"upsert_webhook",
       "INSERT INTO webhooks (" + webhooks + ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
       " ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, created_at_ms = excluded.created_at_ms,"
       " url = excluded.url, events = excluded.events, format = excluded.format, filter = excluded.filter,"
       " secret = excluded.secret, cursor_seq = excluded.cursor_seq, restricted = excluded.restricted"},
      {"raise_webhook_high_water", "UPDATE webhook_id_high_water SET id = GREATEST(id, $1)"},
      // Ignored for a deleted webhook, as the interface says.
      {"upsert_delivery",
       "INSERT INTO webhook_deliveries (" + deliveries +
           ") SELECT $1::bigint, $2::bigint, $3::bigint, $4::bigint, $5::text, $6::bigint, $7::bigint, $8::bigint,"
           " $9::text WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = $1)"
           " ON CONFLICT (webhook_id, n) DO UPDATE SET first_seq = excluded.first_seq,"
           " last_seq = excluded.last_seq, state = excluded.state, attempts = excluded.attempts,"
           " first_attempt_at_ms = excluded.first_attempt_at_ms,"
           " next_attempt_at_ms = excluded.next_attempt_at_ms, log = excluded.log"},
      {"move_webhook_cursor", "UPDATE webhooks SET cursor_seq = $2 WHERE id = $1"},
      {"delete_webhook", "DELETE FROM webhooks WHERE id = $1"},
      {"all_webhooks", "SELECT " + webhooks + " FROM webhooks ORDER BY id"},
      {"max_webhook_id",
       "SELECT GREATEST(COALESCE((SELECT MAX(id) FROM webhooks), 0), (SELECT id FROM webhook_id_high_water))"},
      {"deliveries_of",
       "SELECT " + deliveries + " FROM webhook_deliveries WHERE webhook_id = $1 AND n < $2 ORDER BY n DESC LIMIT $3"},
      {"open_deliveries_of",
       "SELECT " + deliveries +
           " FROM webhook_deliveries WHERE webhook_id = $1 AND state IN ('pending','retrying') ORDER BY n"},
      {"last_event", "SELECT COALESCE(MAX(seq), 0) FROM events"},
      {"webhooks_keep_from",
       "SELECT MIN(seq) FROM (SELECT cursor_seq + 1 AS seq FROM webhooks UNION ALL"
       " SELECT first_seq FROM webhook_deliveries WHERE state IN ('pending','retrying')) AS needed"},
      // The lease (store/postgres_schema.cpp): $1 holder, or the epoch held; $2 URL; $3 ttl ms.
      {"take_lease", lease_answer("UPDATE lease SET epoch = epoch + 1, holder = $1, advertise_url = $2, expires_at = " +
                                  kLeaseExpiry + " WHERE id = 1 AND expires_at <= now()")},
      {"renew_lease", lease_answer("UPDATE lease SET advertise_url = $2, expires_at = " + kLeaseExpiry +
                                   " WHERE id = 1 AND epoch = $1")},
      {"release_lease", "UPDATE lease SET expires_at = now() WHERE id = 1 AND epoch = $1"},
      {"fence", "SELECT trainyard_fence($1)"},
  }};
}

// A job listing: the statement for the filters `query` sets, named after them, and its parameters.
// One statement per combination (as SqliteStore does) keeps each plan on its index.
struct JobQueryStatement {
  std::string name = "jobs";
  std::string sql = "SELECT record FROM jobs WHERE true";
  Params params;

  template <class T>
  void filter(char tag, const std::string& condition, const T& value) {
    params.add(value);
    name += tag;
    sql += " AND " + condition + " $" + std::to_string(params.size());
  }
};

JobQueryStatement job_query(const JobQuery& q) {
  JobQueryStatement s;
  if (!q.states.empty()) {
    std::string states = "{";
    for (JobState state : q.states) {
      if (states.size() > 1) states += ',';
      states += to_string(state);  // appended: g++ 12 at -O3 misreads `"," + std::string&&` (-Wstringop-overflow)
    }
    s.filter('s', "state = ANY(", states + "}");
    s.sql += "::text[])";
  }
  if (q.share) s.filter('h', "share =", *q.share);
  if (q.user) s.filter('u', "\"user\" =", *q.user);
  if (q.before_id) s.filter('b', "id <", *q.before_id);
  if (q.after_id) s.filter('a', "id >", *q.after_id);
  if (q.submitted_since) s.filter('f', "submitted_at_ms >=", to_unix_ms(*q.submitted_since));
  if (q.submitted_until) s.filter('t', "submitted_at_ms <", to_unix_ms(*q.submitted_until));
  s.params.add(q.limit);
  s.sql += " ORDER BY id DESC LIMIT $" + std::to_string(s.params.size());
  return s;
}

template <class Read>
auto all_rows(const pg::Result& result, Read read) {
  std::vector<decltype(read(result.row(0)))> out;
  out.reserve(static_cast<std::size_t>(result.rows()));
  for (int i = 0; i < result.rows(); ++i) out.push_back(read(result.row(i)));
  return out;
}

template <class Read>
auto first_row(const pg::Result& result, Read read) -> std::optional<decltype(read(result.row(0)))> {
  if (result.rows() == 0) return std::nullopt;
  return read(result.row(0));
}

std::int64_t single_int(const pg::Result& result) { return result.rows() ? result.int_at(0, 0) : 0; }

}  // namespace

void end_idle_transactions(pg::Connection& session) {
  session.set_for_session("SET idle_in_transaction_session_timeout = " + std::to_string(kIdleTransactionLimit.count()));
}

PostgresStore::PostgresStore(const std::string& conninfo) : db_(conninfo) {
  end_idle_transactions(db_);
  const int version = migrate(db_, postgres_schema_migrations());
  for (const Prepared& statement : statements()) db_.prepare(statement.name, statement.sql);
  const std::string server_version = db_.query("SHOW server_version").text(0, 0);
  spdlog::info("store.opened postgresql={} server_version={} schema_version={}", db_.where(), server_version, version);
}

PostgresStore::~PostgresStore() = default;

void PostgresStore::commit(std::span<const Change> batch) {
  if (batch.empty()) return;
  db_.reconnect_if_broken();
  std::optional<std::string> transaction;
  try {
    pg::Connection::Pipeline pipeline(db_);
    pipeline.send_sql("BEGIN");
    if (epoch_) pipeline.send("fence", Params().add(*epoch_));
    // One round trip more per batch buys the answer to "was it stored?" when COMMIT's is lost.
    transaction = pipeline.read_value("SELECT pg_current_xact_id()::text");
    for (const Change& change : batch) send(pipeline, change);
    pipeline.send_sql("COMMIT");
    pipeline.finish();
  } catch (const LeaseLost&) {
    if (db_.in_transaction()) db_.exec("ROLLBACK");
    throw;
  } catch (const std::exception& e) {
    spdlog::warn("store.commit_failed changes={} transaction={} error=\"{}\"", batch.size(), transaction.value_or("none"),
                 e.what());
    // Gone after the transaction began writing: its COMMIT may have been carried out unanswered.
    if (db_.broken() && transaction) throw CommitInDoubt(*transaction, std::string("commit: ") + e.what());
    // A failed statement leaves the transaction aborted, its COMMIT skipped: end it.
    if (db_.in_transaction()) db_.exec("ROLLBACK");
    if (dynamic_cast<const StoreError*>(&e)) throw;
    throw StoreError(std::string("commit: ") + e.what());
  }
}

std::optional<bool> PostgresStore::was_committed(const std::string& transaction) {
  try {
    db_.reconnect_if_broken();
    const pg::Result status = db_.query("SELECT pg_xact_status($1::xid8)", Params().add(transaction));
    if (status.is_null(0, 0)) {
      // Too old for the server to keep its status: minutes of outage do not come near that.
      spdlog::error("event=store_commit_unknowable transaction={} hint=\"compare the store with what the daemon said\"",
                    transaction);
      return std::nullopt;
    }
    const std::string said = status.text(0, 0);
    if (said == "in progress") return std::nullopt;  // its backend has not finished it yet
    return said == "committed";
  } catch (const StoreError& e) {
    spdlog::debug("store.commit_still_in_doubt transaction={} error=\"{}\"", transaction, e.what());
    return std::nullopt;
  }
}

void PostgresStore::send(pg::Connection::Pipeline& pipeline, const Change& change) {
  std::string scratch;
  for (std::size_t i = 0; i < change.jobs.size(); ++i) {
    const Job& j = change.jobs[i];
    pipeline.send("upsert_job", Params()
                                    .add(j.id)
                                    .add(j.user)
                                    .add(j.spec.share)
                                    .add(to_string(j.state))
                                    .add(j.spec.priority)
                                    .add(to_unix_ms(j.submitted_at))
                                    .add(job_record_of(change, i, scratch)));
  }
  for (const Attempt& a : change.attempts) {
    pipeline.send("upsert_attempt", Params()
                                        .add(a.id)
                                        .add(a.job_id)
                                        .add(a.number)
                                        .add(to_string(a.state))
                                        .add(attempt_record(a))
                                        .add(ms_or_null(a.ended_at)));
  }
  for (const Node& n : change.nodes) {
    pipeline.send("upsert_node", Params().add(n.name).add(to_string(n.state)).add(record_text(to_json(n))));
  }
  for (const TokenRecord& t : change.tokens) {
    pipeline.send("upsert_token", Params()
                                      .add(t.hash)
                                      .add(t.user)
                                      .add(to_string(t.role))
                                      .add(to_unix_ms(t.created_at))
                                      .add(t.id)
                                      .add(ms_or_null(t.expires_at))
                                      .add(ms_or_null(t.last_used_at)));
  }
  for (const std::string& hash : change.revoked_tokens) pipeline.send("delete_token", Params().add(hash));
  for (const auto& [hash, at] : change.token_uses) {
    pipeline.send("note_token_use", Params().add(hash).add(to_unix_ms(at)));
  }
  for (const ShareRecord& sh : change.shares) {
    Params params;
    params.add(sh.name)
        .add(sh.weight)
        .add(sh.max_running_cores ? std::optional<std::int64_t>(*sh.max_running_cores) : std::nullopt)
        .add(sh.usage_core_s)
        .add(to_unix_ms(sh.usage_at))
        .add(sh.created ? 1 : 0);
    if (sh.members) {
      params.add(json_text(Json(*sh.members)));
    } else {
      params.add_null();
    }
    params.add(sh.storage_limit_mb);
    pipeline.send("upsert_share", params);
  }
  for (const std::string& name : change.deleted_shares) pipeline.send("delete_share", Params().add(name));
  for (const Event& e : change.events) {
    pipeline.send("append_event", Params()
                                      .add(to_unix_ms(e.at))
                                      .add(e.kind)
                                      .add(e.job_id ? std::optional<std::int64_t>(*e.job_id) : std::nullopt)
                                      .add(e.attempt_id ? std::optional<std::int64_t>(*e.attempt_id) : std::nullopt)
                                      .add(e.node)
                                      .add(e.message)
                                      .add(to_string(e.severity))
                                      .add(e.user)
                                      .add(e.share)
                                      .add(record_text(e.details)));
  }
  for (const HealthCheckRow& h : change.health_checks) {
    pipeline.send("upsert_health_check",
                  Params().add(h.id).add(h.kind).add(to_unix_ms(h.created_at)).add(record_text(h.record)));
  }
  for (const NodeHealthRow& h : change.node_health) {
    pipeline.send("upsert_node_health",
                  Params().add(h.node).add(h.check_id).add(to_unix_ms(h.at)).add(h.state).add(record_text(h.record)));
  }
  for (const ClusterSampleRow& c : change.cluster_samples) {
    pipeline.send("upsert_cluster_sample", Params().add(to_unix_ms(c.at)).add(record_text(c.record)));
  }
  if (change.cluster_samples_kept_from) {
    pipeline.send("prune_cluster_samples", Params().add(to_unix_ms(*change.cluster_samples_kept_from)));
  }
  for (const MetricRecord& m : change.metrics) {
    pipeline.send("upsert_metric", Params()
                                       .add(m.job_id)
                                       .add(m.attempt_id)
                                       .add(m.metric.step)
                                       .add(m.metric.loss)
                                       .add(m.metric.grad_norm)
                                       .add(m.metric.param_norm)
                                       .add(m.metric.lr)
                                       .add(m.metric.samples_per_s)
                                       .add(m.metric.spike ? 1 : 0)
                                       .add(m.metric.spike_steps_to_return));
  }
  for (const CheckpointRecord& c : change.checkpoints) {
    pipeline.send("upsert_checkpoint", Params()
                                           .add(c.job_id)
                                           .add(c.step)
                                           .add(c.attempt_id)
                                           .add(c.manifest_sha256)
                                           .add(to_unix_ms(c.recorded_at)));
  }
  for (const WebhookRecord& w : change.webhooks) {
    pipeline.send("upsert_webhook", Params()
                                        .add(w.id)
                                        .add(w.owner)
                                        .add(to_unix_ms(w.created_at))
                                        .add(w.url)
                                        .add(record_text(Json(w.events)))
                                        .add(w.format)
                                        .add(record_text(w.filter))
                                        .add(w.secret)
                                        .add(w.cursor_seq)
                                        .add(w.restricted ? 1 : 0));
    pipeline.send("raise_webhook_high_water", Params().add(w.id));
  }
  for (const WebhookDelivery& d : change.webhook_deliveries) {
    pipeline.send("upsert_delivery", Params()
                                         .add(d.webhook_id)
                                         .add(d.n)
                                         .add(d.first_seq)
                                         .add(d.last_seq)
                                         .add(to_string(d.state))
                                         .add(d.attempts)
                                         .add(to_unix_ms(d.first_attempt_at))
                                         .add(ms_or_null(d.next_attempt_at))
                                         .add(record_text(d.log)));
  }
  for (const auto& [id, seq] : change.webhook_cursors) pipeline.send("move_webhook_cursor", Params().add(id).add(seq));
  for (std::int64_t id : change.deleted_webhooks) pipeline.send("delete_webhook", Params().add(id));
}

pg::Result PostgresStore::read(const char* statement, const Params& params) {
  db_.reconnect_if_broken();
  try {
    return db_.run(statement, params);
  } catch (const StoreError&) {
    // A read is safe to repeat: once, when it was the connection that failed.
    if (!db_.reconnect_if_broken()) throw;
    return db_.run(statement, params);
  }
}

LoadedState PostgresStore::load() {
  db_.reconnect_if_broken();
  // One snapshot for everything, as SQLite's single reader sees.
  pg::Transaction tx(db_, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  // It locks no row, and turning a large table's rows into records may keep it idle past the limit.
  db_.exec("SET LOCAL idle_in_transaction_session_timeout = 0");
  LoadedState state;
  state.active_jobs = all_rows(db_.run("active_jobs"), job_at);
  state.active_attempts = all_rows(db_.run("active_attempts"), attempt_at);
  state.nodes = all_rows(db_.run("all_nodes"), node_at);
  state.shares = all_rows(db_.run("all_shares"), share_at);
  state.max_job_id = single_int(db_.run("max_job_id"));
  state.max_attempt_id = single_int(db_.run("max_attempt_id"));
  state.max_health_check_id = single_int(db_.run("max_health_check_id"));
  state.webhooks = all_rows(db_.run("all_webhooks"), webhook_at);
  state.max_webhook_id = single_int(db_.run("max_webhook_id"));
  tx.commit();
  return state;
}

std::optional<Job> PostgresStore::job(JobId id) { return first_row(read("job_by_id", Params().add(id)), job_at); }

std::vector<Job> PostgresStore::jobs(const JobQuery& query) {
  const JobQueryStatement statement = job_query(query);
  db_.reconnect_if_broken();
  if (!db_.is_prepared(statement.name)) db_.prepare(statement.name, statement.sql);
  return all_rows(db_.run(statement.name, statement.params), job_at);
}

std::vector<Attempt> PostgresStore::attempts_of(JobId job) {
  return all_rows(read("attempts_of_job", Params().add(job)), attempt_at);
}

std::vector<Attempt> PostgresStore::attempts_of_jobs(std::span<const JobId> jobs) {
  std::string ids = "{";
  for (const JobId id : jobs) {
    if (ids.size() > 1) ids += ',';
    ids += std::to_string(id);
  }
  ids += "}";
  return all_rows(read("attempts_of_jobs", Params().add(ids)), attempt_at);
}

std::vector<Attempt> PostgresStore::attempts_running_since(TimePoint from, JobId before_job, int limit) {
  return all_rows(read("attempts_since", Params().add(to_unix_ms(from)).add(before_job).add(limit)), attempt_at);
}

std::optional<Attempt> PostgresStore::attempt(AttemptId id) {
  return first_row(read("attempt_by_id", Params().add(id)), attempt_at);
}

std::optional<Node> PostgresStore::node(const std::string& name) {
  return first_row(read("node_by_name", Params().add(name)), node_at);
}

std::optional<TokenRecord> PostgresStore::token_by_hash(const std::string& hash) {
  return first_row(read("token_by_hash", Params().add(hash)), token_at);
}

std::vector<TokenRecord> PostgresStore::tokens() { return all_rows(read("all_tokens"), token_at); }

std::vector<MetricRecord> PostgresStore::metrics_of(JobId job) {
  return all_rows(read("metrics_of_job", Params().add(job)), metric_at);
}

std::vector<CheckpointRecord> PostgresStore::checkpoints_of(JobId job) {
  return all_rows(read("checkpoints_of_job", Params().add(job)), checkpoint_at);
}

std::optional<HealthCheckRow> PostgresStore::health_check(std::int64_t id) {
  return first_row(read("health_check_by_id", Params().add(id)), health_check_at);
}

std::vector<HealthCheckRow> PostgresStore::recent_health_checks(std::int64_t before_id, int limit) {
  return all_rows(read("recent_health_checks", Params().add(before_id).add(limit)), health_check_at);
}

std::vector<NodeHealthRow> PostgresStore::node_health(const std::string& node, std::int64_t before_check_id, int limit) {
  return all_rows(read("node_health_of", Params().add(node).add(before_check_id).add(limit)), node_health_at);
}

std::vector<ClusterSampleRow> PostgresStore::cluster_samples_since(TimePoint from) {
  return all_rows(read("cluster_samples_since", Params().add(to_unix_ms(from))), cluster_sample_at);
}

std::vector<Event> PostgresStore::events_after(std::int64_t seq, int limit) {
  return all_rows(read("events_after", Params().add(seq).add(limit)), event_at);
}

std::vector<Event> PostgresStore::events_before(std::int64_t seq, int limit) {
  return all_rows(read("events_before", Params().add(seq).add(limit)), event_at);
}

std::vector<Event> PostgresStore::events_of_kind(const std::string& kind_prefix, std::int64_t seq, int limit) {
  return all_rows(read("events_of_kind", Params().add(seq).add(kind_prefix).add(limit)), event_at);
}

std::int64_t PostgresStore::prune_events(TimePoint older_than, std::int64_t keep_from_seq) {
  db_.reconnect_if_broken();
  pg::Transaction tx(db_);
  if (epoch_) db_.run("fence", Params().add(*epoch_));
  const std::int64_t pruned = db_.run("prune_events", Params().add(to_unix_ms(older_than)).add(keep_from_seq)).affected();
  db_.run("prune_deliveries");
  tx.commit();
  return pruned;
}

std::int64_t PostgresStore::last_event_seq() { return single_int(read("last_event")); }

std::vector<WebhookDelivery> PostgresStore::webhook_deliveries(std::int64_t webhook_id,
                                                               std::optional<std::int64_t> before_n, int limit) {
  const std::int64_t below = before_n.value_or(std::numeric_limits<std::int64_t>::max());
  return all_rows(read("deliveries_of", Params().add(webhook_id).add(below).add(limit)), delivery_at);
}

std::vector<WebhookDelivery> PostgresStore::open_webhook_deliveries(std::int64_t webhook_id) {
  return all_rows(read("open_deliveries_of", Params().add(webhook_id)), delivery_at);
}

std::optional<std::int64_t> PostgresStore::webhooks_keep_from_seq() {
  const pg::Result result = read("webhooks_keep_from");
  if (result.rows() == 0 || result.is_null(0, 0)) return std::nullopt;
  return result.int_at(0, 0);
}

std::optional<LeaseState> PostgresStore::acquire_or_renew(const std::string& holder, const std::string& advertise_url,
                                                          std::chrono::milliseconds ttl) {
  db_.reconnect_if_broken();
  const pg::Result answer = epoch_ ? db_.run("renew_lease", Params().add(*epoch_).add(advertise_url).add(ttl.count()))
                                   : db_.run("take_lease", Params().add(holder).add(advertise_url).add(ttl.count()));
  const LeaseState lease{.held = answer.text(0, 0) == "t", .epoch = answer.int_at(0, 1), .active_url = answer.text(0, 2)};
  if (lease.held && !epoch_) {
    epoch_ = lease.epoch;
    spdlog::info("event=lease_taken holder={} epoch={} url={}", holder, lease.epoch, advertise_url);
  }
  return lease;
}

void PostgresStore::release_lease() {
  if (!epoch_) return;
  db_.reconnect_if_broken();
  db_.run("release_lease", Params().add(*epoch_));
  spdlog::info("event=lease_released epoch={}", *epoch_);
}

int PostgresStore::schema_version() {
  db_.reconnect_if_broken();
  return recorded_schema_version(db_);
}

std::string PostgresStore::cluster_name() {
  db_.reconnect_if_broken();
  return db_.query("SELECT name FROM cluster_identity").text(0, 0);
}

}  // namespace trainyard::store
