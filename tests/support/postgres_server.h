#pragma once
// A throwaway PostgreSQL server for tests and benchmarks: initdb + pg_ctl (Debian's `postgresql`
// package) on a fresh temporary directory, listening only on a Unix socket inside it (no TCP port),
// stopped and deleted with this object. (initdb's output is kept as a template beside it, copied by
// the next servers: see template_dir() in the .cpp.) initdb refuses to run as root, so as root the server runs
// as the `postgres` account the package creates, and its directory is that account's.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace trainyard {

class PostgresServer {
 public:
  struct Options {
    // fsync and synchronous commits on, as a real server: for benchmarks of durable commits. Tests
    // leave them off, which only risks data on power loss (there is none to keep).
    bool durable = false;
  };

  // Why a server cannot be started here (the binaries are missing), or nullopt when it can.
  static std::optional<std::string> unavailable();
  // Starts a server; throws std::runtime_error (with the server's log) when it does not start.
  explicit PostgresServer(Options options);
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // The one server of this process for tests, started on first use and stopped at exit.
  static PostgresServer& shared();

  // A connection URI (postgresql://...) to an empty schema of its own, made for the caller: each
  // store opened on one starts from nothing, as on a new database.
  std::string fresh_store_url();
  // A connection URI to the server's `postgres` database, as its superuser.
  std::string url() const;

  // An outage: `pg_ctl stop -m immediate` (every backend dies at once, as in a crash; the next start
  // recovers from the WAL), and the server started again on the same data, socket and options.
  void stop_immediately();
  void start_again();

 private:
  void start(Options options);
  void give_to_owner(const std::filesystem::path& dir) const;
  void run_as_owner(const std::string& command) const;

  std::filesystem::path dir_;
  std::string server_options_;  // pg_ctl -o, kept for start_again
  std::optional<std::string> owner_;  // the account it runs as, when this process is root
  int schemas_ = 0;
};

}  // namespace trainyard
