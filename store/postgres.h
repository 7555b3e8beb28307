#pragma once
// A thin RAII layer over libpq, just what the PostgreSQL store needs: a connection, statements
// prepared once by name, results, and a pipeline that sends a whole batch of statements in one round
// trip. Every libpq failure becomes a StoreError carrying the server's message and what was being
// done (LeaseLost when it was the fencing check, store/postgres_schema.cpp). Values travel in
// text format: the store's columns are integers, doubles and text.
//
// Threading: none of these is thread-safe; the store is used by one thread at a time (store/store.h).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/result.h"

struct pg_conn;
struct pg_result;

namespace trainyard::store::pg {

// Statement parameters ($1, $2, ... in the order added).
class Params {
 public:
  Params& add(std::int64_t value);
  Params& add(int value) { return add(static_cast<std::int64_t>(value)); }
  Params& add(double value);  // NaN and infinities included
  Params& add(std::string_view value);
  Params& add(const std::string& value) { return add(std::string_view(value)); }
  Params& add(const char* value) { return add(std::string_view(value)); }
  Params& add(std::optional<std::int64_t> value);
  Params& add_null();

  int size() const { return static_cast<int>(values_.size()); }
  // libpq's view: pointers into this object, valid while it lives unchanged.
  std::vector<const char*> pointers() const;

 private:
  std::vector<std::string> values_;
  std::vector<bool> nulls_;
};

class Result {
 public:
  explicit Result(pg_result* result) : result_(result) {}
  ~Result();
  Result(Result&& other) noexcept;
  Result& operator=(Result&&) = delete;
  Result(const Result&) = delete;

  bool ok() const;
  int rows() const;
  // Rows a DELETE, UPDATE or INSERT touched.
  std::int64_t affected() const;
  // Rows and columns are 0-based.
  bool is_null(int row, int column) const;
  std::string text(int row, int column) const;
  std::int64_t int_at(int row, int column) const;
  double real_at(int row, int column) const;
  // A row as the shared readers take it (store/rows.h).
  class Row row(int index) const;

 private:
  friend class Connection;  // reads the failure's SQLSTATE
  pg_result* result_;
};

class Row {
 public:
  Row(const Result& result, int index) : result_(result), index_(index) {}
  std::int64_t int_at(int column) const { return result_.int_at(index_, column); }
  double real_at(int column) const { return result_.real_at(index_, column); }
  std::string text_at(int column) const { return result_.text(index_, column); }
  bool is_null_at(int column) const { return result_.is_null(index_, column); }

 private:
  const Result& result_;
  int index_;
};

inline Row Result::row(int index) const { return Row(*this, index); }

class Connection {
 public:
  // `conninfo`: a postgresql:// URI or key=value string (libpq's). Throws StoreError.
  explicit Connection(const std::string& conninfo);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more statements that return nothing of interest (simple query protocol).
  void exec(std::string_view sql);
  // A one-off parameterised statement.
  Result query(std::string_view sql, const Params& params = {});
  // Prepares `sql` under `name` for the connection's life (and again after a reconnect).
  void prepare(const std::string& name, const std::string& sql);
  Result run(const std::string& name, const Params& params = {});
  // Runs `set` (a SET statement) now and again after every reconnect: a setting of this session.
  void set_for_session(const std::string& set);
  bool is_prepared(const std::string& name) const;
  // Inside a transaction block, a failed one included.
  bool in_transaction() const;
  // The server went away (or never answered): nothing more can be sent until a reconnect.
  bool broken() const;

  // When the server went away (restart, failover, network), connects again and prepares every
  // statement again; returns whether it had to. Throws StoreError when it cannot reconnect.
  bool reconnect_if_broken();

  // Sends `send`'s statements and a Sync, in one round trip as far as the socket allows, and reads
  // every result. The first failure is thrown (StoreError) after the rest have been read; the server
  // skips everything after a failure up to the Sync.
  class Pipeline {
   public:
    explicit Pipeline(Connection& db);
    ~Pipeline();
    Pipeline(const Pipeline&) = delete;
    Pipeline& operator=(const Pipeline&) = delete;

    void send(const std::string& name, const Params& params);
    void send_sql(std::string_view sql);  // without parameters: BEGIN, COMMIT
    // Sends `sql` and reads every result so far, in one round trip: its first cell, or nullopt when
    // it failed or was skipped after a failure (thrown by `finish`).
    std::optional<std::string> read_value(std::string_view sql);
    void finish();

   private:
    void read_sent();

    Connection& db_;
    int unread_ = 0;
    std::optional<std::string> last_value_;  // the first cell of the last statement read, when it had rows
    std::optional<std::string> failure_;
    bool failure_is_lease_lost_ = false;  // thrown as LeaseLost
  };

  [[noreturn]] void fail(std::string_view doing) const;
  pg_conn* handle() const { return conn_; }
  // Host and database, never the password: what a log line may name.
  std::string where() const;

 private:
  void check(const Result& result, std::string_view doing) const;

  pg_conn* conn_ = nullptr;
  std::vector<std::pair<std::string, std::string>> prepared_;  // name, sql
  std::vector<std::string> session_settings_;
};

// BEGIN on construction, ROLLBACK on destruction unless `commit()` succeeded.
class Transaction {
 public:
  explicit Transaction(Connection& db, std::string_view begin = "BEGIN");
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Connection& db_;
};

// libpq's verdict on a connection string before any connection is tried: invalid_input of `field`
// with libpq's reason when it does not parse.
proto::Result<void> check_conninfo(const std::string& conninfo, const std::string& field);

}  // namespace trainyard::store::pg
