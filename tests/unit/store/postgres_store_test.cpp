// What only the PostgreSQL store promises (the rest is the conformance suite): its --store URL is
// checked before anything connects, the schema outlives the connection and is refused when newer,
// a batch longer than one pipeline read is still one transaction, and a broken connection heals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "proto/errors.h"
#include "store/postgres.h"
#include "store/postgres_store.h"
#include "store/schema.h"
#include "store/store_url.h"
#include "tests/support/postgres_server.h"
#include "tests/unit/store/records.h"

namespace trainyard {
namespace {

using ::testing::HasSubstr;

TEST(StoreUrl, NamesSqliteFilesAndPostgresqlServers) {
  const StoreUrl file = parse_store_url("sqlite:///var/lib/trainyard/t.db");
  EXPECT_EQ(file.kind, StoreUrl::Kind::sqlite);
  EXPECT_EQ(file.target, "/var/lib/trainyard/t.db");
  EXPECT_EQ(parse_store_url("sqlite://relative.db").target, "relative.db");
  for (const char* url : {"postgresql://trainyard@db.example.com/trainyard?sslmode=verify-full", "postgres:///t"}) {
    const StoreUrl server = parse_store_url(url);
    EXPECT_EQ(server.kind, StoreUrl::Kind::postgresql);
    EXPECT_EQ(server.target, url);
  }
}

TEST(StoreUrl, RefusesWhatNamesNoStoreNamingTheFlag) {
  for (const char* url : {"", "mysql://db/t", "/var/lib/t.db", "sqlite://", "postgresql://h/db?no_such_option=1",
                          "postgresql://h/db?sslmode"}) {
    try {
      parse_store_url(url);
      ADD_FAILURE() << "accepted " << url;
    } catch (const InvalidInput& e) {
      EXPECT_EQ(e.field(), "--store") << url;
      EXPECT_FALSE(e.message().empty()) << url;
    }
  }
}

class PostgresStoreServer : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = PostgresServer::unavailable()) GTEST_SKIP() << *why;
    url = PostgresServer::shared().fresh_store_url();
  }
  static void commit(Store& store, const Change& change) { store.commit(std::span(&change, 1)); }

  std::string url;
};

TEST_F(PostgresStoreServer, ReopeningKeepsEverything) {
  {
    PostgresStore store(url);
    commit(store, Change{.jobs = {full_job(1), minimal_job(2)}, .attempts = {full_attempt(10, 1)},
                         .events = {Event{.kind = "job.submitted", .job_id = 1}}});
  }
  PostgresStore again(url);
  EXPECT_EQ(as_json(again.job(1)), as_json(full_job(1)));
  EXPECT_EQ(as_json(again.attempt(10)), as_json(full_attempt(10, 1)));
  EXPECT_EQ(again.events_after(0, 10).size(), 1u);
  EXPECT_EQ(again.schema_version(), latest_schema_version());
}

TEST_F(PostgresStoreServer, ASchemaNewerThanThisBuildIsRefused) {
  { PostgresStore store(url); }
  pg::Connection(url).exec("INSERT INTO schema_version (version, name) VALUES (999, 'from the future')");
  try {
    PostgresStore store(url);
    FAIL() << "opened a schema newer than this build";
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("schema version 999 is newer than this build supports"));
  }
}

TEST_F(PostgresStoreServer, ALongBatchIsOneTransactionEvenWhenItsLastStatementFails) {
  PostgresStore store(url);
  std::vector<Change> batch;
  for (JobId id = 1; id <= 600; ++id) batch.push_back(Change{.jobs = {minimal_job(id)}, .events = {Event{.kind = "job.submitted", .job_id = id}}});
  store.commit(batch);
  EXPECT_EQ(store.load().max_job_id, 600);
  EXPECT_EQ(store.events_after(0, 1000).size(), 600u);

  // Far past the first pipeline read: the failure still takes everything before it back.
  batch.clear();
  for (JobId id = 601; id <= 1200; ++id) batch.push_back(Change{.jobs = {minimal_job(id)}});
  batch.push_back(Change{.attempts = {minimal_attempt(1, 601)}});   // job 601 is earlier in the batch: fine
  batch.push_back(Change{.attempts = {minimal_attempt(2, 9999)}});  // there is no job 9999
  EXPECT_THROW(store.commit(batch), StoreError);
  EXPECT_EQ(store.load().max_job_id, 600);
  EXPECT_FALSE(store.attempt(1));
  commit(store, Change{.jobs = {minimal_job(601)}});
  EXPECT_TRUE(store.job(601));
}

TEST_F(PostgresStoreServer, AStoreWhoseConnectionWasCutConnectsAgain) {
  PostgresStore store(url);
  commit(store, Change{.jobs = {minimal_job(1)}});
  const auto cut = [&] {
    pg::Connection(url).exec(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        " WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'");
  };
  cut();
  EXPECT_TRUE(store.job(1));  // a read is repeated on a new connection
  cut();
  EXPECT_THROW(commit(store, Change{.jobs = {minimal_job(2)}}), StoreError);  // its outcome is unknown
  commit(store, Change{.jobs = {minimal_job(3)}});
  EXPECT_TRUE(store.job(3));
}

}  // namespace
}  // namespace trainyard
