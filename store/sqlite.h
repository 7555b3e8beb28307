#pragma once
// A thin RAII layer over the SQLite C API, just what the store needs: a connection, prepared
// statements that are compiled once and reused, and a transaction guard. Every SQLite failure
// becomes a StoreError carrying SQLite's own message and what was being done.
//
// Threading: none of these is thread-safe; the connection is opened without SQLite's mutexes
// because the store is used by one thread at a time (store/store.h).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace trainyard::store::sqlite {

class Connection {
 public:
  // Opens `file`, creating it when missing. Throws StoreError.
  explicit Connection(const std::filesystem::path& file);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more SQL statements that return no rows.
  void exec(std::string_view sql);
  // The first column of the first row of a one-off query (PRAGMAs, MAX(...)); nullopt when no row.
  std::optional<std::string> query_text(std::string_view sql);
  bool in_transaction() const;
  const std::filesystem::path& file() const { return file_; }

  [[noreturn]] void fail(std::string_view doing) const;
  sqlite3* handle() const { return db_; }

 private:
  std::filesystem::path file_;
  sqlite3* db_ = nullptr;
};

// A prepared statement. Use it through a `Statement::Use`, which resets it when it goes out of
// scope, so an exception never leaves it mid-step holding a read snapshot open.
class Statement {
 public:
  Statement(Connection& db, std::string_view sql);
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;

  class Use {
   public:
    explicit Use(Statement& s) : s_(s) {}
    ~Use();
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

    // Parameters are 1-based, as in SQL's `?1`.
    Use& bind_int(int index, std::int64_t value);
    Use& bind_real(int index, double value);
    Use& bind_text(int index, std::string_view value);
    Use& bind_null(int index);
    Use& bind_optional_int(int index, std::optional<std::int64_t> value);

    // Steps once: true when a row is ready to read.
    bool next_row();
    // Steps to the end of a statement that returns no rows.
    void run();

    // Columns are 0-based, as in SQLite's C API.
    std::int64_t int_at(int column) const;
    double real_at(int column) const;
    std::string text_at(int column) const;
    bool is_null_at(int column) const;

   private:
    Statement& s_;
  };

 private:
  std::string label() const;

  Connection* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

// BEGIN IMMEDIATE on construction (the write lock up front, so a commit never fails half-way on
// a lock upgrade); ROLLBACK on destruction unless `commit()` succeeded.
class Transaction {
 public:
  explicit Transaction(Connection& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Connection& db_;
};

}  // namespace trainyard::store::sqlite
