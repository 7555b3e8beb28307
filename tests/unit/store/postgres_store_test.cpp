// What only the PostgreSQL store promises (the rest is the conformance suite): its --store URL is
// checked before anything connects, the schema outlives the connection and is refused when newer,
// a batch longer than one pipeline read is still one transaction, a broken connection heals, and the
// lease of active / standby daemons fences the writes of a holder that lost it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "proto/errors.h"
#include "store/postgres.h"
#include "store/postgres_schema.h"
#include "store/postgres_store.h"
#include "store/schema.h"
#include "store/store_url.h"
#include "tests/support/postgres_server.h"
#include "tests/unit/store/records.h"

namespace trainyard::store {
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

// What tells a commit whose answer was lost (CommitInDoubt) is the server's record of its transaction.
TEST_F(PostgresStoreServer, WhetherATransactionWasStoredIsAskedOfTheServer) {
  PostgresStore store(url);
  pg::Connection other(url);
  const auto begun = [&] {
    other.exec("BEGIN");
    return other.query("SELECT pg_current_xact_id()::text").text(0, 0);
  };
  const std::string committed = begun();
  other.exec("COMMIT");
  const std::string rolled_back = begun();
  other.exec("ROLLBACK");
  const std::string open = begun();
  EXPECT_EQ(store.was_committed(committed), true);
  EXPECT_EQ(store.was_committed(rolled_back), false);
  EXPECT_EQ(store.was_committed(open), std::nullopt) << "still in progress: not yet known";
  other.exec("COMMIT");
  EXPECT_EQ(store.was_committed(open), true);
}

// Active / standby: two daemons' stores on one database, the lease between them.
class PostgresLease : public PostgresStoreServer {
 protected:
  static constexpr std::chrono::milliseconds kTtl{60'000};  // expiry is forced below, never waited for

  // As if the holder had stopped renewing a ttl ago, by the server's clock.
  void expire_lease() { pg::Connection(url).exec("UPDATE lease SET expires_at = now() - interval '1 second'"); }
  bool job_stored(JobId id) { return PostgresStore(url).job(id).has_value(); }
};

TEST_F(PostgresLease, TheFirstTakesItAndTheOtherLearnsTheActiveUrl) {
  PostgresStore a(url), b(url);
  EXPECT_EQ(a.acquire_or_renew("a", "http://a:1", kTtl), (LeaseState{true, 1, "http://a:1"}));
  EXPECT_EQ(b.acquire_or_renew("b", "http://b:1", kTtl), (LeaseState{false, 1, "http://a:1"}));
}

TEST_F(PostgresLease, RenewingWhileHeldKeepsTheEpoch) {
  PostgresStore a(url);
  ASSERT_TRUE(a.acquire_or_renew("a", "http://a:1", kTtl)->held);
  EXPECT_EQ(a.acquire_or_renew("a", "http://a:1", kTtl), (LeaseState{true, 1, "http://a:1"}));
  expire_lease();  // nobody took it meanwhile: nothing was written by another, so it is still a's
  EXPECT_EQ(a.acquire_or_renew("a", "http://a:1", kTtl), (LeaseState{true, 1, "http://a:1"}));
}

TEST_F(PostgresLease, ATakeOverAfterExpiryRaisesTheEpochAndFencesTheOldHolder) {
  PostgresStore a(url), b(url);
  ASSERT_TRUE(a.acquire_or_renew("a", "http://a:1", kTtl)->held);
  commit(a, Change{.jobs = {minimal_job(1)}});
  EXPECT_FALSE(b.acquire_or_renew("b", "http://b:1", kTtl)->held);
  expire_lease();
  EXPECT_EQ(b.acquire_or_renew("b", "http://b:1", kTtl), (LeaseState{true, 2, "http://b:1"}));

  EXPECT_THROW(commit(a, Change{.jobs = {minimal_job(2)}, .events = {Event{.kind = "job.submitted", .job_id = 2}}}),
               LeaseLost);
  EXPECT_FALSE(job_stored(2));
  EXPECT_EQ(b.last_event_seq(), 0);
  EXPECT_THROW(a.prune_events(TimePoint{}, 1), LeaseLost);
  // The old holder never takes it back, even once the new one's lease runs out.
  EXPECT_EQ(a.acquire_or_renew("a", "http://a:1", kTtl), (LeaseState{false, 2, "http://b:1"}));
  expire_lease();
  EXPECT_EQ(a.acquire_or_renew("a", "http://a:1", kTtl), (LeaseState{false, 2, ""}));
  commit(b, Change{.jobs = {minimal_job(3)}});
  EXPECT_TRUE(job_stored(1));
  EXPECT_TRUE(job_stored(3));
}

TEST_F(PostgresLease, AReleasedLeaseIsTakenAtOnceAndTheOldHolderStaysFenced) {
  PostgresStore a(url), b(url);
  ASSERT_TRUE(a.acquire_or_renew("a", "http://a:1", kTtl)->held);
  EXPECT_FALSE(b.acquire_or_renew("b", "http://b:1", kTtl)->held);
  a.release_lease();
  EXPECT_EQ(b.acquire_or_renew("b", "http://b:1", kTtl), (LeaseState{true, 2, "http://b:1"})) << "waited for the ttl";
  EXPECT_THROW(commit(a, Change{.jobs = {minimal_job(1)}}), LeaseLost);
  EXPECT_FALSE(job_stored(1));
  b.release_lease();
  PostgresStore lone(url);
  lone.release_lease();  // holds nothing: changes nothing
  EXPECT_EQ(lone.acquire_or_renew("c", "http://c:1", kTtl), (LeaseState{true, 3, "http://c:1"}));
}

// The fence is inside the old holder's transaction: a commit that begins while a take-over is
// under way waits for it, then sees the new epoch and stores nothing.
TEST_F(PostgresLease, ACommitRacingATakeOverWaitsForItAndFails) {
  PostgresStore a(url);
  ASSERT_TRUE(a.acquire_or_renew("a", "http://a:1", kTtl)->held);
  pg::Connection taker(url);
  taker.exec("BEGIN");
  taker.exec("UPDATE lease SET epoch = epoch + 1, holder = 'b', advertise_url = 'http://b:1'");
  auto old_commit = std::async(std::launch::async, [&] { commit(a, Change{.jobs = {minimal_job(1)}}); });
  EXPECT_EQ(old_commit.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);  // held by the row lock
  taker.exec("COMMIT");
  EXPECT_THROW(old_commit.get(), LeaseLost);
  EXPECT_FALSE(job_stored(1));
}

// SIGSTOP can freeze a daemon between two round trips of its commit, after its fence took the
// lease row FOR SHARE: the server ends that transaction, so the standby still takes over.
TEST_F(PostgresLease, AHolderFrozenInsideItsCommitDoesNotHoldOffATakeOver) {
  PostgresStore b(url);
  {
    PostgresStore a(url);
    ASSERT_TRUE(a.acquire_or_renew("a", "http://a:1", kTtl)->held);
  }
  expire_lease();
  pg::Connection frozen(url);  // a's session, as the store sets it up
  end_idle_transactions(frozen);
  frozen.exec("BEGIN");
  frozen.query("SELECT trainyard_fence(1)");
  auto take_over = std::async(std::launch::async, [&] { return b.acquire_or_renew("b", "http://b:1", kTtl); });
  const bool answered = take_over.wait_for(kIdleTransactionLimit * 5) == std::future_status::ready;
  if (!answered) frozen.exec("ROLLBACK");  // lets the take-over finish so the test can end
  EXPECT_TRUE(answered) << "the frozen holder's lock held the take-over off";
  EXPECT_EQ(take_over.get(), (LeaseState{true, 2, "http://b:1"}));
  EXPECT_THROW(frozen.exec("COMMIT"), StoreError);
}

TEST(PostgresSchemaHistory, HasSqlitesStepsUnderTheSameNumbers) {
  const auto steps = postgres_schema_migrations();
  ASSERT_EQ(steps.size(), schema_migrations().size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].version, static_cast<int>(i) + 1);
    EXPECT_EQ(steps[i].name, schema_migrations()[i].name);
  }
}

// The steps that change rows already stored, on rows from before them.
class PostgresSchemaMigration : public PostgresStoreServer {
 protected:
  void SetUp() override {
    PostgresStoreServer::SetUp();
    if (!IsSkipped()) db = std::make_unique<pg::Connection>(url);
  }
  std::string text(const std::string& sql) { return db->query(sql).text(0, 0); }

  std::unique_ptr<pg::Connection> db;
};

TEST_F(PostgresSchemaMigration, AnEmptySchemaIsAtVersionZeroAndStepsApplyOnce) {
  EXPECT_EQ(recorded_schema_version(*db), 0);
  EXPECT_EQ(migrate(*db, postgres_schema_migrations().first(3)), 3);
  EXPECT_EQ(migrate(*db, postgres_schema_migrations()), latest_schema_version());
  EXPECT_EQ(migrate(*db, postgres_schema_migrations()), latest_schema_version());
  EXPECT_EQ(text("SELECT COUNT(*) FROM schema_version"), std::to_string(latest_schema_version()));
}

TEST_F(PostgresSchemaMigration, SharesFromBeforeAdminsCreatedThemAreCreatedOnlyWhereAnAdminShapedThem) {
  migrate(*db, postgres_schema_migrations().first(3));
  db->exec("INSERT INTO shares (name, weight, max_running_cores, usage_core_s, usage_at_ms) VALUES"
           " ('weighted', 2.0, NULL, 0, 0), ('capped', 1.0, 8, 0, 0), ('invented', 1.0, NULL, 5, 0),"
           " ('system', 3.0, NULL, 0, 0)");
  migrate(*db, postgres_schema_migrations());
  EXPECT_EQ(text("SELECT string_agg(name || ':' || created || ':' || COALESCE(members, 'all'), ',' ORDER BY name)"
                 " FROM shares"),
            "capped:1:all,invented:0:all,system:0:all,weighted:1:all");
}

TEST_F(PostgresSchemaMigration, TokensFromBeforeLifecycleGetDistinctIdsAndNoExpiry) {
  migrate(*db, postgres_schema_migrations().first(5));
  db->exec("INSERT INTO tokens (hash, \"user\", role, created_at_ms) VALUES ('h1', 'admin', 'admin', 1),"
           " ('h2', 'alice', 'user', 2)");
  migrate(*db, postgres_schema_migrations());
  EXPECT_EQ(text("SELECT COUNT(DISTINCT id) FROM tokens WHERE id LIKE 'tok_%' AND expires_at_ms IS NULL"), "2");
  db->exec("INSERT INTO tokens (hash, id, \"user\", role, created_at_ms) VALUES ('h3', 'tok_x', 'olga', 'operator', 3)");
  EXPECT_EQ(text("SELECT role FROM tokens WHERE hash = 'h3'"), "operator");
}

TEST_F(PostgresSchemaMigration, AttemptsFromBeforeTheEndColumnTakeTheirEndFromTheRecord) {
  migrate(*db, postgres_schema_migrations().first(8));
  db->exec("INSERT INTO jobs (id, \"user\", share, state, priority, submitted_at_ms, record)"
           " VALUES (1, 'u', 's', 'FAILED', 0, 0, '{}')");
  db->exec("INSERT INTO attempts (id, job_id, number, state, record) VALUES"
           " (1, 1, 1, 'FAILED', '{\"ended_at\": \"2026-11-22T13:49:51.123Z\"}'), (2, 1, 2, 'RUNNING', '{}')");
  migrate(*db, postgres_schema_migrations());
  EXPECT_EQ(text("SELECT string_agg(id || ':' || COALESCE(ended_at_ms::text, 'null'), ',' ORDER BY id) FROM attempts"),
            "1:" + std::to_string(to_unix_ms(*parse_time("2026-11-22T13:49:51.123Z"))) + ",2:null");
}

}  // namespace
}  // namespace trainyard::store
