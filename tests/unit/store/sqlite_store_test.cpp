// What only the SQLite store promises: the file outlives the process, the schema is migrated and
// versioned, and a file it cannot trust is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>

#include "store/schema.h"
#include "store/sqlite_store.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/store/records.h"

namespace trainyard::store {
namespace {

using ::testing::HasSubstr;

class SqliteStoreFile : public ::testing::Test {
 protected:
  std::filesystem::path file() const { return dir.path() / "trainyard.db"; }
  static void commit(Store& store, const Change& change) { store.commit(std::span(&change, 1)); }

  TempDir dir;
};

TEST_F(SqliteStoreFile, ReopeningKeepsEverything) {
  const Change change{.jobs = {full_job(1), minimal_job(2), simulated_job(3)},
                      .attempts = {full_attempt(10, 1), minimal_attempt(11, 2, AttemptState::running)},
                      .nodes = {full_node("n1"), minimal_node("n2")},
                      .tokens = {TokenRecord{"h", "alice", Role::admin, at_ms(5)}},
                      .shares = {ShareRecord{"team-a", 2, 8, 10.5, at_ms(6)}},
                      .events = {event("job.submitted", 1), event("node.state", {}, {}, "n1")}};
  LoadedState before;
  std::vector<Event> events_before;
  {
    SqliteStore store(file());
    commit(store, change);
    before = store.load();
    events_before = store.events_after(0, 10);
  }
  SqliteStore store(file());
  const LoadedState after = store.load();
  EXPECT_EQ(as_json(after.active_jobs), as_json(before.active_jobs));
  EXPECT_EQ(as_json(after.active_attempts), as_json(before.active_attempts));
  EXPECT_EQ(as_json(after.nodes), as_json(before.nodes));
  EXPECT_EQ(after.shares, before.shares);
  EXPECT_EQ(after.max_job_id, 3);
  EXPECT_EQ(after.max_attempt_id, 11);
  for (const Job& j : change.jobs) {
    EXPECT_EQ(as_json(store.job(j.id)), as_json(j));
  }
  EXPECT_EQ(as_json(store.attempts_of(1)), as_json(std::vector<Attempt>{full_attempt(10, 1)}));
  EXPECT_EQ(store.token_by_hash("h"), change.tokens[0]);
  EXPECT_EQ(store.events_after(0, 10), events_before);
  EXPECT_EQ(store.schema_version(), latest_schema_version());
}

TEST_F(SqliteStoreFile, AnAcknowledgedCommitSurvivesKillNine) {
  // The child commits, then dies without closing the database or checkpointing the WAL.
  constexpr int kJobs = 200;
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    try {
      SqliteStore store(file());
      for (JobId id = 1; id <= kJobs; ++id) commit(store, Change{.jobs = {minimal_job(id)}});
      std::raise(SIGKILL);
    } catch (...) {
    }
    _exit(1);  // never return into gtest: the child would go on running the other tests
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the child did not reach its kill";

  SqliteStore store(file());
  EXPECT_EQ(store.load().active_jobs.size(), static_cast<std::size_t>(kJobs));
  EXPECT_EQ(as_json(store.job(kJobs)), as_json(minimal_job(kJobs)));
}

TEST_F(SqliteStoreFile, ANewFileIsMigratedToTheLatestVersionInWalMode) {
  { SqliteStore store(file()); }
  sqlite::Connection db(file());
  EXPECT_EQ(db.query_text("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(recorded_schema_version(db), latest_schema_version());
  EXPECT_EQ(db.query_text("SELECT COUNT(*) FROM schema_version"), std::to_string(schema_migrations().size()));
}

// Issue 56: the name gives a cluster's directories and job uids their own, so a new database
// beside an old one's files never reuses them: made once, kept, and another database's differs.
TEST_F(SqliteStoreFile, ANewDatabaseNamesItsClusterOnceAndAnotherDatabaseDiffers) {
  std::string name;
  {
    SqliteStore store(file());
    name = store.cluster_name();
  }
  EXPECT_THAT(name, ::testing::MatchesRegex("[0-9a-f]{16}"));
  EXPECT_EQ(SqliteStore(file()).cluster_name(), name) << "reopened";
  EXPECT_NE(SqliteStore(dir.path() / "other.db").cluster_name(), name);
}

// A database whose jobs already have directories and uids keeps them: its name stays empty.
TEST_F(SqliteStoreFile, ADatabaseWithJobsBeforeClusterNamesKeepsAnEmptyName) {
  {
    sqlite::Connection db(file());
    std::vector<Migration> before(schema_migrations().begin(), schema_migrations().end() - 1);
    ASSERT_EQ(before.back().version + 1, latest_schema_version()) << "the cluster name's migration is the latest";
    migrate(db, before);
  }
  {
    SqliteStore store(file());
    EXPECT_FALSE(store.cluster_name().empty()) << "opening migrated it: no jobs yet, so a name";
  }
  std::filesystem::remove(file());
  {
    sqlite::Connection db(file());
    migrate(db, std::vector<Migration>(schema_migrations().begin(), schema_migrations().end() - 1));
    db.exec("INSERT INTO jobs (id, user, share, state, priority, submitted_at_ms, record) "
            "VALUES (1, 'alice', 'default', 'PENDING', 0, 0, '{}')");
  }
  EXPECT_EQ(SqliteStore(file()).cluster_name(), "");
}

TEST_F(SqliteStoreFile, RefusesADatabaseWrittenByANewerVersion) {
  { SqliteStore store(file()); }
  const int future = latest_schema_version() + 1;
  {
    sqlite::Connection db(file());
    db.exec("INSERT INTO schema_version (version, name, applied_at) VALUES (" + std::to_string(future) +
            ", 'from the future', 'later')");
  }
  try {
    SqliteStore store(file());
    FAIL() << "opened a database with schema version " << future;
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("schema version " + std::to_string(future) + " is newer than this build"));
  }
}

TEST_F(SqliteStoreFile, RefusesAFileThatIsNotADatabase) {
  std::ofstream(file()) << "these are not the pages you are looking for, not even a header........";
  EXPECT_THROW(SqliteStore store(file()), StoreError);
}

TEST_F(SqliteStoreFile, StoresAPreRenderedJobRecordAsTheJob) {
  SqliteStore store(file());
  Job job = minimal_job(1);
  job.reason = "rendered before the commit";
  commit(store, Change{.jobs = {job}, .job_records = {job_record(job)}});
  const auto stored = store.job(1);
  ASSERT_TRUE(stored);
  EXPECT_EQ(to_json(*stored), to_json(job));
}

TEST_F(SqliteStoreFile, InvalidUtf8InATextIsStoredReplacedRatherThanFailingTheCommit) {
  // A failure reason can quote arbitrary process output; it must not make the commit fail.
  SqliteStore store(file());
  Job job = minimal_job(1);
  job.reason = "exit: \xff\xfe tail";
  commit(store, Change{.jobs = {job}});
  EXPECT_EQ(store.job(1)->reason, "exit: \xEF\xBF\xBD\xEF\xBF\xBD tail");
}

}  // namespace
}  // namespace trainyard::store
