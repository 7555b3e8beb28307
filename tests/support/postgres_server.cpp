#include "tests/support/postgres_server.h"

#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/file.h>
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

// initdb takes seconds, and ctest runs every test case in a process of its own: the first server on
// a machine makes a cluster to copy (kept for the next runs, one per account; a new name whenever the
// initdb options change), and every server starts on a copy of it.
fs::path template_dir() {
  return fs::temp_directory_path() / ("trainyard-pg-template-v1-uid" + std::to_string(geteuid()));
}

// An exclusive lock on a file while it lives: processes making the template take turns.
class FileLock {
 public:
  explicit FileLock(const fs::path& file) : fd_(open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
    if (fd_ < 0 || flock(fd_, LOCK_EX) != 0) throw std::system_error(errno, std::generic_category(), "lock " + file.string());
  }
  ~FileLock() { close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

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
  try {
    start(options);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
    throw;
  }
}

void PostgresServer::start(Options options) {
  if (geteuid() == 0) owner_ = "postgres";
  give_to_owner(dir_);
  const fs::path data = dir_ / "data";
  const fs::path cluster_template = template_dir();
  {
    FileLock lock(cluster_template.string() + ".lock");
    if (!fs::exists(cluster_template / "ready")) {
      fs::remove_all(cluster_template);
      fs::create_directory(cluster_template);
      give_to_owner(cluster_template);
      run_as_owner((bin_dir() / "initdb").string() + " -D " + (cluster_template / "data").string() + " -U " + kSuperuser +
                   " -A trust -E UTF8 --locale=C --no-sync --no-instructions > " + (dir_ / "initdb.log").string() +
                   " 2>&1");
      std::ofstream(cluster_template / "ready") << "initdb done\n";
    }
  }
  run_as_owner("cp -a " + (cluster_template / "data").string() + " " + data.string());
  server_options_ = "-k " + dir_.string() + " -c listen_addresses=";
  if (!options.durable) server_options_ += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off";
  start_again();
}

void PostgresServer::start_again() {
  run_as_owner((bin_dir() / "pg_ctl").string() + " -D " + (dir_ / "data").string() + " -l " +
               (dir_ / "server.log").string() + " -w -t 120 -o '" + server_options_ + "' start > /dev/null");
}

void PostgresServer::stop_immediately() {
  run_as_owner((bin_dir() / "pg_ctl").string() + " -D " + (dir_ / "data").string() + " -m immediate -w stop > /dev/null");
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

void PostgresServer::give_to_owner(const std::filesystem::path& dir) const {
  if (!owner_) return;
  const passwd* account = getpwnam(owner_->c_str());
  if (!account || chown(dir.c_str(), account->pw_uid, account->pw_gid) != 0) {
    throw std::system_error(errno, std::generic_category(), "chown " + dir.string() + " to " + *owner_);
  }
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
  store::pg::Connection(url()).exec("CREATE SCHEMA " + schema);
  return url() + "&options=-csearch_path%3D" + schema;
}

}  // namespace trainyard
