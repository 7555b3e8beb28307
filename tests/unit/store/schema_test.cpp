// The migration runner, driven by small made-up schema histories.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "proto/time.h"
#include "store/schema.h"
#include "store/store.h"
#include "tests/support/temp_dir.h"

namespace trainyard::store {
namespace {

using ::testing::HasSubstr;

constexpr std::array kHistory = {
    Migration{1, "create a", "CREATE TABLE a (x INTEGER)"},
    Migration{2, "create b", "CREATE TABLE b (y INTEGER)"},
    Migration{3, "fill a", "INSERT INTO a (x) VALUES (7)"},
};

class SchemaMigration : public ::testing::Test {
 protected:
  std::span<const Migration> first(std::size_t n) { return std::span(kHistory).first(n); }
  bool has_table(const std::string& name) {
    return db.query_text("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '" + name + "'").has_value();
  }

  TempDir dir;
  sqlite::Connection db{dir.path() / "schema.db"};
};

TEST_F(SchemaMigration, ANewFileIsAtVersionZero) { EXPECT_EQ(recorded_schema_version(db), 0); }

TEST_F(SchemaMigration, AppliesOnlyTheStepsNewerThanTheRecordedVersion) {
  EXPECT_EQ(migrate(db, first(1)), 1);
  EXPECT_TRUE(has_table("a"));
  EXPECT_FALSE(has_table("b"));
  // Step 1 would fail if run twice (the table exists), so reaching version 3 shows it ran once.
  EXPECT_EQ(migrate(db, first(3)), 3);
  EXPECT_EQ(migrate(db, first(3)), 3);
  EXPECT_TRUE(has_table("b"));
  EXPECT_EQ(db.query_text("SELECT COUNT(*) FROM a"), "1");
  EXPECT_EQ(recorded_schema_version(db), 3);
  EXPECT_EQ(db.query_text("SELECT group_concat(step, ',') FROM"
                          " (SELECT version || ':' || name AS step FROM schema_version ORDER BY version)"),
            "1:create a,2:create b,3:fill a");
}

TEST_F(SchemaMigration, AFailingStepLeavesTheDatabaseAtThePreviousVersion) {
  const std::array broken = {kHistory[0], Migration{2, "half done", "CREATE TABLE c (z); INSERT INTO missing VALUES (1)"}};
  EXPECT_THROW(migrate(db, broken), StoreError);
  EXPECT_EQ(recorded_schema_version(db), 1);
  EXPECT_TRUE(has_table("a"));
  EXPECT_FALSE(has_table("c"));
  // A fixed build picks up where it stopped.
  EXPECT_EQ(migrate(db, first(2)), 2);
}

TEST_F(SchemaMigration, RefusesADatabaseNewerThanTheCode) {
  migrate(db, first(3));
  try {
    migrate(db, first(2));
    FAIL() << "an older schema history was applied to a newer database";
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("schema version 3 is newer than this build supports (2)"));
  }
  EXPECT_EQ(recorded_schema_version(db), 3);
}

TEST_F(SchemaMigration, SharesFromBeforeAdminsCreatedThemAreCreatedOnlyWhereAnAdminShapedThem) {
  migrate(db, schema_migrations().first(3));
  db.exec("INSERT INTO shares (name, weight, max_running_cores, usage_core_s, usage_at_ms) VALUES"
          " ('weighted', 2.0, NULL, 0, 0), ('capped', 1.0, 8, 0, 0), ('invented', 1.0, NULL, 5, 0),"
          " ('system', 3.0, NULL, 0, 0)");
  migrate(db, schema_migrations());
  EXPECT_EQ(db.query_text("SELECT group_concat(name || ':' || created || ':' || COALESCE(members, 'all'), ',') FROM"
                          " (SELECT * FROM shares ORDER BY name)"),
            "capped:1:all,invented:0:all,system:0:all,weighted:1:all");
}

TEST_F(SchemaMigration, TokensFromBeforeLifecycleGetDistinctIdsAndNoExpiry) {
  migrate(db, schema_migrations().first(5));
  db.exec("INSERT INTO tokens (hash, user, role, created_at_ms) VALUES ('h1', 'admin', 'admin', 1), ('h2', 'alice', 'user', 2)");
  migrate(db, schema_migrations());
  EXPECT_EQ(db.query_text("SELECT COUNT(DISTINCT id) FROM tokens WHERE id LIKE 'tok_%' AND expires_at_ms IS NULL"), "2");
  db.exec("INSERT INTO tokens (hash, id, user, role, created_at_ms) VALUES ('h3', 'tok_x', 'olga', 'operator', 3)");
  EXPECT_EQ(db.query_text("SELECT role FROM tokens WHERE hash = 'h3'"), "operator");
}

TEST(SchemaHistory, IsNumberedFromOneWithoutGaps) {
  const auto steps = schema_migrations();
  ASSERT_FALSE(steps.empty());
  for (std::size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i].version, static_cast<int>(i) + 1);
  EXPECT_EQ(latest_schema_version(), steps.back().version);
}

TEST_F(SchemaMigration, AttemptsFromBeforeTheEndColumnTakeTheirEndFromTheRecord) {
  migrate(db, schema_migrations().first(8));
  db.exec("INSERT INTO jobs (id, user, share, state, priority, submitted_at_ms, record) VALUES (1, 'u', 's', 'FAILED', 0, 0, '{}')");
  db.exec("INSERT INTO attempts (id, job_id, number, state, record) VALUES"
          " (1, 1, 1, 'FAILED', '{\"ended_at\": \"2026-11-22T13:49:51.123Z\"}'), (2, 1, 2, 'RUNNING', '{}')");
  migrate(db, schema_migrations());
  EXPECT_EQ(db.query_text("SELECT group_concat(id || ':' || COALESCE(ended_at_ms, 'null'), ',') FROM"
                          " (SELECT * FROM attempts ORDER BY id)"),
            "1:" + std::to_string(to_unix_ms(*parse_time("2026-11-22T13:49:51.123Z"))) + ",2:null");
}

// Whether SQLite codes a statement with a temporary table (its CHECKs' IN lists did, per row).
bool builds_a_temporary_table(sqlite::Connection& db, const std::string& sql) {
  sqlite::Statement explain(db, "EXPLAIN " + sql);
  sqlite::Statement::Use use(explain);
  while (use.next_row()) {
    if (use.text_at(1) == "OpenEphemeral") return true;
  }
  return false;
}

TEST_F(SchemaMigration, ChecksAsComparisonsKeepEveryRowAndTheEventSequenceAndStillRefuseBadStates) {
  db.exec("PRAGMA foreign_keys = ON");  // as the store opens it: the rebuilt parents keep their children
  migrate(db, schema_migrations().first(12));
  const std::vector<std::string> writes = {
      "INSERT INTO jobs (id, user, share, state, priority, submitted_at_ms, record) VALUES (9, 'u', 's', 'PENDING', 0, 0, '{}')",
      "INSERT INTO attempts (id, job_id, number, state, record) VALUES (9, 1, 1, 'RUNNING', '{}')",
      "INSERT INTO events (at_ms, kind, node, message, severity) VALUES (1, 'k', '', 'm', 'warning')",
      "INSERT INTO nodes (name, state, record) VALUES ('n9', 'HEALTHY', '{}')"};
  for (const auto& sql : writes) EXPECT_TRUE(builds_a_temporary_table(db, sql)) << sql;  // what step 13 removes
  db.exec("INSERT INTO jobs (id, user, share, state, priority, submitted_at_ms, record) VALUES"
          " (1, 'alice', 'a', 'SUCCEEDED', 3, 10, '{\"id\":1}'), (2, 'bob', 'b', 'PENDING', 0, 20, '{\"id\":2}')");
  db.exec("INSERT INTO attempts (id, job_id, number, state, record, ended_at_ms) VALUES (1, 1, 1, 'PREEMPTED', '{}', 5),"
          " (2, 1, 2, 'SUCCEEDED', '{}', 6)");
  db.exec("INSERT INTO checkpoints (job_id, step, attempt_id, manifest_sha256, recorded_at_ms) VALUES (1, 10, 2, 'x', 7)");
  db.exec("INSERT INTO events (at_ms, kind, job_id, attempt_id, node, message, severity, user, share, details) VALUES"
          " (1, 'job.submitted', 1, NULL, '', 'one', 'info', 'alice', 'a', '{}'),"
          " (2, 'job.failed', 1, 1, 'n1', 'two', 'error', 'alice', 'a', '{\"x\":1}'),"
          " (3, 'node.down', NULL, NULL, 'n1', 'three', 'warning', '', '', '{}')");
  db.exec("DELETE FROM events WHERE seq = 3");  // the newest gone: seq 3 must still never be given again
  db.exec("INSERT INTO nodes (name, state, record) VALUES ('n1', 'DRAINED', '{}')");
  const auto rows = [&] {
    return db.query_text(
        "SELECT (SELECT group_concat(id || user || share || state || priority || submitted_at_ms || record, ',') FROM"
        " (SELECT * FROM jobs ORDER BY id)) || '|' ||"
        " (SELECT group_concat(id || job_id || number || state || record || ended_at_ms, ',') FROM"
        " (SELECT * FROM attempts ORDER BY id)) || '|' ||"
        " (SELECT group_concat(seq || at_ms || kind || COALESCE(job_id, '-') || COALESCE(attempt_id, '-') || node ||"
        " message || severity || user || share || details, ',') FROM (SELECT * FROM events ORDER BY seq)) || '|' ||"
        " (SELECT group_concat(name || state || record, ',') FROM nodes)");
  };
  const auto before = rows();

  migrate(db, schema_migrations());
  EXPECT_EQ(rows(), before);
  EXPECT_EQ(db.query_text("PRAGMA foreign_key_check"), std::nullopt);
  EXPECT_EQ(db.query_text("SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master WHERE type = 'index'"
                          " AND tbl_name IN ('jobs', 'attempts', 'events', 'nodes') AND sql IS NOT NULL ORDER BY name)"),
            "attempts_by_end,attempts_by_job,attempts_by_state,events_by_job,events_by_time,jobs_by_share,jobs_by_state,"
            "jobs_by_user");
  for (const auto& sql : writes) EXPECT_FALSE(builds_a_temporary_table(db, sql)) << sql;
  db.exec("INSERT INTO events (at_ms, kind, node, message) VALUES (4, 'k', '', 'four')");
  EXPECT_EQ(db.query_text("SELECT MAX(seq) FROM events"), "4");
  EXPECT_THROW(db.exec("UPDATE jobs SET state = 'LOST' WHERE id = 1"), StoreError);
  EXPECT_THROW(db.exec("UPDATE attempts SET state = 'PENDING' WHERE id = 1"), StoreError);
  EXPECT_THROW(db.exec("UPDATE events SET severity = 'fatal' WHERE seq = 1"), StoreError);
  EXPECT_THROW(db.exec("UPDATE nodes SET state = 'GONE' WHERE name = 'n1'"), StoreError);
  EXPECT_THROW(db.exec("INSERT INTO attempts (id, job_id, number, state, record) VALUES (3, 77, 1, 'RUNNING', '{}')"),
               StoreError);  // the foreign key to jobs holds on the rebuilt tables
}

}  // namespace
}  // namespace trainyard::store
