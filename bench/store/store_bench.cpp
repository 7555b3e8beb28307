// Durable submissions per second through Store::commit, at the batch sizes the daemon's group
// commit produces. Each submission is what the daemon writes for a POST /v1/jobs: the job record and
// its "job.submitted" event. Every commit is durable: on SQLite fsynced (WAL, synchronous=FULL), so
// the figures depend on the filesystem under --dir (default: $TMPDIR or /tmp); on PostgreSQL
// flushed by the server (fsync on, synchronous_commit on), each batch size on an empty schema.
//
//   store_bench [--dir DIR] [--seconds S] [--batch N]...   (default batch sizes: 1 10 100 1000)
//   store_bench --postgres [...]          a throwaway server under --dir (tests/support/postgres_server.h)
//   store_bench --store postgresql://... [...]   a running server; a schema per batch size, dropped after
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "store/postgres.h"
#include "store/postgres_store.h"
#include "store/sqlite_store.h"
#include "tests/support/postgres_server.h"

namespace trainyard {
namespace {

struct Options {
  std::filesystem::path dir = std::filesystem::temp_directory_path();
  double seconds = 2.0;  // per batch size
  std::vector<int> batch_sizes;
  bool throwaway_postgres = false;
  std::string postgres_url;  // a server of the caller's
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--dir" && i + 1 < argc) {
      o.dir = argv[++i];
    } else if (arg == "--seconds" && i + 1 < argc) {
      o.seconds = std::stod(argv[++i]);
    } else if (arg == "--batch" && i + 1 < argc) {
      o.batch_sizes.push_back(std::stoi(argv[++i]));
    } else if (arg == "--postgres") {
      o.throwaway_postgres = true;
    } else if (arg == "--store" && i + 1 < argc) {
      o.postgres_url = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: store_bench [--dir DIR] [--seconds S] [--batch N]... [--postgres | --store postgresql://...]\n");
      std::exit(2);
    }
  }
  if (o.batch_sizes.empty()) o.batch_sizes = {1, 10, 100, 1000};
  return o;
}

// CPU time of this process: unlike wall time, it does not depend on what else the machine runs.
double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

store::Change submission(JobId id, TimePoint now) {
  Job job;
  job.id = id;
  job.user = "bench";
  job.submitted_at = now;
  job.spec.name = "bench-" + std::to_string(id);
  job.spec.share = id % 2 ? "team-a" : "team-b";
  job.spec.priority = static_cast<int>(id % 10);
  job.spec.nodes = 2;
  job.spec.command.argv = {"/usr/bin/python3", "train.py", "--steps=1000"};
  job.spec.command.env = {{"NCCL_DEBUG", "WARN"}};
  job.spec.labels = {{"experiment", "bench"}};
  store::Event submitted;
  submitted.at = now;
  submitted.kind = "job.submitted";
  submitted.job_id = id;
  submitted.message = "submitted by bench";
  return store::Change{.jobs = {std::move(job)}, .events = {std::move(submitted)}};
}

void measure(store::Store& store, int batch_size, double seconds) {
  const SystemTimeSource clock;
  JobId next_id = 1;
  long commits = 0;
  const double cpu_start = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  auto now = start;
  while (now < deadline) {
    std::vector<store::Change> batch;
    batch.reserve(static_cast<std::size_t>(batch_size));
    for (int i = 0; i < batch_size; ++i) batch.push_back(submission(next_id++, clock.system_now()));
    store.commit(batch);
    ++commits;
    now = std::chrono::steady_clock::now();
  }
  const double elapsed = std::chrono::duration<double>(now - start).count();
  const double cpu = cpu_seconds() - cpu_start;
  const long jobs = commits * batch_size;
  // CPU of this process only: on PostgreSQL the server's own work is not in it.
  std::printf(
      "batch=%-5d commits=%-7ld jobs=%-8ld seconds=%.2f commits_per_s=%.0f jobs_per_s=%.0f cpu_us_per_job=%.1f\n",
      batch_size, commits, jobs, elapsed, commits / elapsed, jobs / elapsed, cpu * 1e6 / jobs);
  std::fflush(stdout);
}

void run_sqlite(const Options& options, int batch_size) {
  std::string pattern = (options.dir / "store-bench-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a directory under " + options.dir.string());
  const std::filesystem::path dir = pattern;
  {
    store::SqliteStore store(dir / "bench.db");
    measure(store, batch_size, options.seconds);
  }
  std::filesystem::remove_all(dir);
}

void run_postgres(const std::string& url, int batch_size, double seconds) {
  const std::string schema = "store_bench_" + std::to_string(getpid()) + "_" + std::to_string(batch_size);
  store::pg::Connection admin(url);
  admin.exec("CREATE SCHEMA " + schema);
  {
    store::PostgresStore store(url + (url.find('?') == std::string::npos ? "?" : "&") + "options=-csearch_path%3D" + schema);
    measure(store, batch_size, seconds);
  }
  admin.exec("DROP SCHEMA " + schema + " CASCADE");
}

}  // namespace
}  // namespace trainyard

int main(int argc, char** argv) {
  using namespace trainyard;
  const Options options = parse_options(argc, argv);
  spdlog::set_level(spdlog::level::warn);  // one "store.opened" line per run would clutter the table
  if (!options.throwaway_postgres && options.postgres_url.empty()) {
    std::printf("store_bench sqlite dir=%s seconds_per_batch_size=%.1f (WAL, synchronous=FULL)\n", options.dir.c_str(),
                options.seconds);
    for (int batch_size : options.batch_sizes) run_sqlite(options, batch_size);
    return 0;
  }
  std::unique_ptr<PostgresServer> server;
  if (options.throwaway_postgres) {
    setenv("TMPDIR", options.dir.c_str(), 1);  // the server's directory, hence its WAL, under --dir
    server = std::make_unique<PostgresServer>(PostgresServer::Options{.durable = true});
  }
  const std::string url = server ? server->url() : options.postgres_url;
  std::printf("store_bench postgresql %s seconds_per_batch_size=%.1f (fsync on, synchronous_commit on)\n",
              server ? ("throwaway server under " + options.dir.string()).c_str() : "server of --store",
              options.seconds);
  for (int batch_size : options.batch_sizes) run_postgres(url, batch_size, options.seconds);
  return 0;
}
