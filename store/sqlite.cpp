#include "store/sqlite.h"

#include <sqlite3.h>

#include <utility>

#include "store/store.h"

namespace trainyard::store::sqlite {

Connection::Connection(const std::filesystem::path& file) : file_(file) {
  const int rc = sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    throw StoreError("cannot open " + file.string() + ": " + message);
  }
  sqlite3_extended_result_codes(db_, 1);
}

Connection::~Connection() { sqlite3_close_v2(db_); }

void Connection::exec(std::string_view sql) {
  const std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) fail(text);
}

std::optional<std::string> Connection::query_text(std::string_view sql) {
  Statement statement(*this, sql);
  Statement::Use use(statement);
  if (!use.next_row()) return std::nullopt;
  return use.text_at(0);
}

bool Connection::in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

void Connection::fail(std::string_view doing) const {
  throw StoreError(file_.string() + ": " + std::string(doing) + ": " + sqlite3_errmsg(db_));
}

Statement::Statement(Connection& db, std::string_view sql) : db_(&db), sql_(sql) {
  // PERSISTENT: these live as long as the store, which is what SQLite's allocator should plan for.
  if (sqlite3_prepare_v3(db.handle(), sql_.data(), static_cast<int>(sql_.size()), SQLITE_PREPARE_PERSISTENT, &stmt_,
                         nullptr) != SQLITE_OK) {
    db.fail("prepare " + sql_);
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

std::string Statement::label() const {
  // "INSERT INTO attempts" says enough in an error; the column lists and upsert clauses do not.
  return sql_.substr(0, sql_.find(" ("));
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), sql_(std::move(other.sql_)) {}

Statement::Use::~Use() {
  sqlite3_reset(s_.stmt_);
  sqlite3_clear_bindings(s_.stmt_);
}

Statement::Use& Statement::Use::bind_int(int index, std::int64_t value) {
  if (sqlite3_bind_int64(s_.stmt_, index, value) != SQLITE_OK) s_.db_->fail("bind " + s_.label());
  return *this;
}

Statement::Use& Statement::Use::bind_real(int index, double value) {
  if (sqlite3_bind_double(s_.stmt_, index, value) != SQLITE_OK) s_.db_->fail("bind " + s_.label());
  return *this;
}

Statement::Use& Statement::Use::bind_text(int index, std::string_view value) {
  if (sqlite3_bind_text64(s_.stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8) != SQLITE_OK) {
    s_.db_->fail("bind " + s_.label());
  }
  return *this;
}

Statement::Use& Statement::Use::bind_null(int index) {
  if (sqlite3_bind_null(s_.stmt_, index) != SQLITE_OK) s_.db_->fail("bind " + s_.label());
  return *this;
}

Statement::Use& Statement::Use::bind_optional_int(int index, std::optional<std::int64_t> value) {
  return value ? bind_int(index, *value) : bind_null(index);
}

bool Statement::Use::next_row() {
  switch (sqlite3_step(s_.stmt_)) {
    case SQLITE_ROW: return true;
    case SQLITE_DONE: return false;
    default: s_.db_->fail(s_.label());
  }
}

void Statement::Use::run() {
  while (next_row()) {
  }
}

std::int64_t Statement::Use::int_at(int column) const { return sqlite3_column_int64(s_.stmt_, column); }

double Statement::Use::real_at(int column) const { return sqlite3_column_double(s_.stmt_, column); }

std::string Statement::Use::text_at(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s_.stmt_, column));
  return text ? std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(s_.stmt_, column))) : std::string();
}

bool Statement::Use::is_null_at(int column) const { return sqlite3_column_type(s_.stmt_, column) == SQLITE_NULL; }

Transaction::Transaction(Connection& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  // COMMIT can fail and leave the transaction open (SQLITE_BUSY, I/O errors): roll back then too.
  if (db_.in_transaction()) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() { db_.exec("COMMIT"); }

}  // namespace trainyard::store::sqlite
