#include "store/postgres.h"

#include <libpq-fe.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "store/store.h"

namespace trainyard::store::pg {
namespace {

// A long batch is read back every this many statements, so neither side's socket buffer ever fills
// with results the other is not reading (which would stall both).
constexpr int kReadEvery = 256;

std::string message_of(const pg_conn* conn) {
  std::string message = PQerrorMessage(conn);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message;
}

bool succeeded(const pg_result* result) {
  switch (PQresultStatus(result)) {
    case PGRES_COMMAND_OK:
    case PGRES_TUPLES_OK:
    case PGRES_PIPELINE_SYNC: return true;
    default: return false;
  }
}

std::string result_message(const pg_result* result) {
  std::string message = PQresultErrorMessage(result);
  while (!message.empty() && message.back() == '\n') message.pop_back();
  return message.empty() ? PQresStatus(PQresultStatus(result)) : message;
}

// What trainyard_fence raises when the epoch it checks is no longer the lease's (store/postgres_schema.cpp).
constexpr std::string_view kLeaseLostSqlstate = "TYL01";

bool lease_lost(const pg_result* result) {
  const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
  return state && state == kLeaseLostSqlstate;
}

// Notices ("relation already exists, skipping") are the server talking to a person; a daemon logs them.
void log_notice(void*, const char* message) { spdlog::debug("store.postgres_notice message=\"{}\"", message); }

// "INSERT INTO jobs" says enough in an error; the column lists and upsert clauses do not.
std::string label_of(std::string_view sql) { return std::string(sql.substr(0, sql.find(" ("))); }

}  // namespace

Params& Params::add(std::int64_t value) {
  values_.push_back(std::to_string(value));
  nulls_.push_back(false);
  return *this;
}

Params& Params::add(double value) {
  if (std::isnan(value)) return add(std::string_view("NaN"));
  if (std::isinf(value)) return add(std::string_view(value > 0 ? "Infinity" : "-Infinity"));
  char buffer[32];
  // Shortest text that reads back as the same double.
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return add(std::string_view(buffer, static_cast<std::size_t>(end - buffer)));
}

Params& Params::add(std::string_view value) {
  values_.emplace_back(value);
  nulls_.push_back(false);
  return *this;
}

Params& Params::add(std::optional<std::int64_t> value) { return value ? add(*value) : add_null(); }

Params& Params::add_null() {
  values_.emplace_back();
  nulls_.push_back(true);
  return *this;
}

std::vector<const char*> Params::pointers() const {
  std::vector<const char*> out;
  out.reserve(values_.size());
  for (std::size_t i = 0; i < values_.size(); ++i) out.push_back(nulls_[i] ? nullptr : values_[i].c_str());
  return out;
}

Result::~Result() { PQclear(result_); }

Result::Result(Result&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}

bool Result::ok() const { return result_ && succeeded(result_); }

int Result::rows() const { return PQntuples(result_); }

std::int64_t Result::affected() const {
  const char* text = PQcmdTuples(result_);
  return *text ? std::strtoll(text, nullptr, 10) : 0;
}

bool Result::is_null(int row, int column) const { return PQgetisnull(result_, row, column) != 0; }

std::string Result::text(int row, int column) const {
  return std::string(PQgetvalue(result_, row, column), static_cast<std::size_t>(PQgetlength(result_, row, column)));
}

std::int64_t Result::int_at(int row, int column) const {
  const char* text = PQgetvalue(result_, row, column);
  std::int64_t value = 0;
  std::from_chars(text, text + PQgetlength(result_, row, column), value);
  return value;
}

double Result::real_at(int row, int column) const {
  // strtod reads PostgreSQL's "NaN", "Infinity" and "-Infinity" too.
  return std::strtod(PQgetvalue(result_, row, column), nullptr);
}

Connection::Connection(const std::string& conninfo) : conn_(PQconnectdb(conninfo.c_str())) {
  if (!conn_) throw StoreError("postgresql: out of memory connecting");
  if (PQstatus(conn_) != CONNECTION_OK) {
    const std::string message = message_of(conn_);
    PQfinish(conn_);
    throw StoreError("cannot connect to postgresql: " + message);
  }
  PQsetNoticeProcessor(conn_, log_notice, nullptr);
}

Connection::~Connection() { PQfinish(conn_); }

std::string Connection::where() const {
  const char* host = PQhost(conn_);
  return std::string(PQdb(conn_)) + "@" + (host ? host : "") + ":" + PQport(conn_);
}

void Connection::fail(std::string_view doing) const {
  throw StoreError("postgresql " + where() + ": " + std::string(doing) + ": " + message_of(conn_));
}

void Connection::exec(std::string_view sql) {
  const std::string text(sql);
  Result result(PQexec(conn_, text.c_str()));
  check(result, label_of(sql));
}

void Connection::check(const Result& result, std::string_view doing) const {
  if (result.ok()) return;
  if (lease_lost(result.result_)) throw LeaseLost("postgresql " + where() + ": " + result_message(result.result_));
  fail(doing);
}

Result Connection::query(std::string_view sql, const Params& params) {
  const std::string text(sql);
  const auto values = params.pointers();
  Result result(PQexecParams(conn_, text.c_str(), params.size(), nullptr, values.data(), nullptr, nullptr, 0));
  check(result, label_of(sql));
  return result;
}

void Connection::prepare(const std::string& name, const std::string& sql) {
  Result result(PQprepare(conn_, name.c_str(), sql.c_str(), 0, nullptr));
  check(result, "prepare " + label_of(sql));
  prepared_.emplace_back(name, sql);
}

Result Connection::run(const std::string& name, const Params& params) {
  const auto values = params.pointers();
  Result result(PQexecPrepared(conn_, name.c_str(), params.size(), values.data(), nullptr, nullptr, 0));
  check(result, name);
  return result;
}

void Connection::set_for_session(const std::string& set) {
  exec(set);
  session_settings_.push_back(set);
}

bool Connection::is_prepared(const std::string& name) const {
  for (const auto& statement : prepared_) {
    if (statement.first == name) return true;
  }
  return false;
}

bool Connection::in_transaction() const {
  const PGTransactionStatusType status = PQtransactionStatus(conn_);
  return status == PQTRANS_INTRANS || status == PQTRANS_INERROR;
}

bool Connection::broken() const { return PQstatus(conn_) != CONNECTION_OK; }

bool Connection::reconnect_if_broken() {
  if (!broken()) return false;
  spdlog::warn("event=store_reconnect where={}", where());
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) fail("reconnect");
  for (const std::string& set : session_settings_) exec(set);
  std::vector<std::pair<std::string, std::string>> statements = std::move(prepared_);
  prepared_.clear();
  for (const auto& [name, sql] : statements) prepare(name, sql);
  return true;
}

Connection::Pipeline::Pipeline(Connection& db) : db_(db) {
  if (PQenterPipelineMode(db_.conn_) != 1) db_.fail("enter pipeline mode");
}

Connection::Pipeline::~Pipeline() {
  if (PQpipelineStatus(db_.conn_) == PQ_PIPELINE_OFF) return;
  // Left by an exception half-way: finish the exchange so the connection stays usable.
  try {
    finish();
  } catch (const std::exception& e) {
    spdlog::debug("store.pipeline_abandoned error=\"{}\"", e.what());
  }
}

void Connection::Pipeline::send(const std::string& name, const Params& params) {
  const auto values = params.pointers();
  if (PQsendQueryPrepared(db_.conn_, name.c_str(), params.size(), values.data(), nullptr, nullptr, 0) != 1) {
    db_.fail("send " + name);
  }
  if (++unread_ >= kReadEvery) {
    if (PQsendFlushRequest(db_.conn_) != 1 || PQflush(db_.conn_) != 0) db_.fail("flush");
    read_sent();
  }
}

void Connection::Pipeline::send_sql(std::string_view sql) {
  const std::string text(sql);
  if (PQsendQueryParams(db_.conn_, text.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0) != 1) db_.fail(text);
  ++unread_;
}

void Connection::Pipeline::read_sent() {
  for (; unread_ > 0; --unread_) {
    // Each statement's results end with a null; a failed one, and those the server skipped after it,
    // carry their error (PGRES_FATAL_ERROR, then PGRES_PIPELINE_ABORTED).
    while (pg_result* raw = PQgetResult(db_.conn_)) {
      Result result(raw);
      if (unread_ == 1 && PQresultStatus(raw) == PGRES_TUPLES_OK && PQntuples(raw) > 0) last_value_ = PQgetvalue(raw, 0, 0);
      if (!succeeded(raw) && !failure_ && PQresultStatus(raw) != PGRES_PIPELINE_ABORTED) {
        failure_ = result_message(raw);
        failure_is_lease_lost_ = lease_lost(raw);
      }
    }
  }
}

std::optional<std::string> Connection::Pipeline::read_value(std::string_view sql) {
  send_sql(sql);
  if (PQsendFlushRequest(db_.conn_) != 1 || PQflush(db_.conn_) != 0) db_.fail("flush");
  last_value_.reset();
  read_sent();
  return std::exchange(last_value_, std::nullopt);
}

void Connection::Pipeline::finish() {
  if (PQpipelineSync(db_.conn_) != 1) db_.fail("pipeline sync");
  read_sent();
  // The Sync's own result closes the exchange.
  for (;;) {
    pg_result* raw = PQgetResult(db_.conn_);
    if (!raw) break;  // the connection broke; exiting pipeline mode below says so
    const bool synced = PQresultStatus(raw) == PGRES_PIPELINE_SYNC;
    PQclear(raw);
    if (synced) break;
  }
  if (PQexitPipelineMode(db_.conn_) != 1 && PQstatus(db_.conn_) == CONNECTION_OK) db_.fail("exit pipeline mode");
  if (PQstatus(db_.conn_) != CONNECTION_OK) db_.fail("pipeline");
  if (!failure_) return;
  const std::string message = "postgresql " + db_.where() + ": " + *std::exchange(failure_, std::nullopt);
  if (failure_is_lease_lost_) throw LeaseLost(message);
  throw StoreError(message);
}

Transaction::Transaction(Connection& db, std::string_view begin) : db_(db) { db_.exec(begin); }

Transaction::~Transaction() {
  if (db_.in_transaction()) PQclear(PQexec(db_.handle(), "ROLLBACK"));
}

void Transaction::commit() { db_.exec("COMMIT"); }

proto::Result<void> check_conninfo(const std::string& conninfo, const std::string& field) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  if (options) {
    PQconninfoFree(options);
    return {};
  }
  std::string message = error ? error : "cannot parse the connection string";
  PQfreemem(error);
  while (!message.empty() && message.back() == '\n') message.pop_back();
  return Error::invalid_input(field, "not a PostgreSQL connection URI: " + message);
}

}  // namespace trainyard::store::pg
