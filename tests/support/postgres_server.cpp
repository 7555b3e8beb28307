#include "tests/support/postgres_server.h"

#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "store/postgres.h"

namespace trainyard {
namespace {

namespace fs = std::filesystem;

// Debian's PostgreSQL 15; TRAINYARD_PG_BIN names another installation's bin directory.
fs::path bin_dir() {
  const char* env = std::getenv("TRAINYARD_PG_BIN");
  return env && *env ? fs::path(env) : fs::path("/usr/lib/postgresql/15/bin");
}

std::string tail_of(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  return all.size() > 2000 ? all.substr(all.size() - 2000) : all;
}

constexpr const char* kSuperuser = "trainyard";

}  // namespace

std::optional<std::string> PostgresServer::unavailable() {
  for (const char* tool : {"initdb", "pg_ctl", "postgres"}) {
    if (access((bin_dir() / tool).c_str(), X_OK) != 0) {
      return "no PostgreSQL server binaries in " + bin_dir().string() +
             " (apt-get install postgresql, as deploy/install-deps.sh does; or set TRAINYARD_PG_BIN)";
    }
  }
  if (geteuid() == 0 && !getpwnam("postgres")) return "running as root and there is no `postgres` account to run initdb as";
  return std::nullopt;
}

PostgresServer::PostgresServer(Options options) {
  if (auto why = unavailable()) throw std::runtime_error("cannot start PostgreSQL: " + *why);
  std::string pattern = (fs::temp_directory_path() / "trainyard-pg-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
  dir_ = pattern;
  if (geteuid() == 0) {
    owner_ = "postgres";
    const passwd* account = getpwnam("postgres");
    if (chown(dir_.c_str(), account->pw_uid, account->pw_gid) != 0) {
      throw std::system_error(errno, std::generic_category(), "chown " + dir_.string());
    }
  }
  const fs::path data = dir_ / "data";
  run_as_owner((bin_dir() / "initdb").string() + " -D " + data.string() + " -U " + kSuperuser +
               " -A trust -E UTF8 --locale=C --no-sync --no-instructions > " + (dir_ / "initdb.log").string() +
               " 2>&1");
  std::string server_options = "-k " + dir_.string() + " -c listen_addresses=";
  if (!options.durable) server_options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off";
  run_as_owner((bin_dir() / "pg_ctl").string() + " -D " + data.string() + " -l " + (dir_ / "server.log").string() +
               " -w -t 120 -o '" + server_options + "' start > /dev/null");
}

PostgresServer::~PostgresServer() {
  try {
    run_as_owner((bin_dir() / "pg_ctl").string() + " -D " + (dir_ / "data").string() +
                 " -m immediate -w stop > /dev/null 2>&1");
  } catch (const std::exception&) {
    // Not started, or gone already: its directory goes all the same.
  }
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

void PostgresServer::run_as_owner(const std::string& command) const {
  std::string line = command;
  if (owner_) {
    std::string quoted;  // for sh -c '...'
    for (char c : command) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line = "runuser -u " + *owner_ + " -- sh -c '" + quoted + "'";
  }
  if (std::system(line.c_str()) != 0) {
    throw std::runtime_error("PostgreSQL test server: `" + command + "` failed\n" + tail_of(dir_ / "initdb.log") +
                             tail_of(dir_ / "server.log"));
  }
}

PostgresServer& PostgresServer::shared() {
  static PostgresServer server(Options{});
  return server;
}

std::string PostgresServer::url() const {
  return "postgresql:///postgres?host=" + dir_.string() + "&user=" + kSuperuser;
}

std::string PostgresServer::fresh_store_url() {
  const std::string schema = "store_" + std::to_string(++schemas_);
  pg::Connection(url()).exec("CREATE SCHEMA " + schema);
  return url() + "&options=-csearch_path%3D" + schema;
}

}  // namespace trainyard
