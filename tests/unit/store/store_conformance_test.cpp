// One suite, every Store: SqliteStore on a fresh file, PostgresStore on a fresh schema of a throwaway
// server and the InMemoryStore fake must behave the same, so tests of the daemon that use the fake
// say something true about the real stores.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "store/postgres_store.h"
#include "store/schema.h"
#include "store/sqlite_store.h"
#include "tests/support/in_memory_store.h"
#include "tests/support/postgres_server.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/store/records.h"

namespace trainyard::store {
namespace {

struct InMemory {
  std::unique_ptr<Store> open() { return std::make_unique<InMemoryStore>(); }
};

struct Sqlite {
  TempDir dir;
  std::unique_ptr<Store> open() { return std::make_unique<SqliteStore>(dir.path() / "trainyard.db"); }
};

// One server for the whole run (started at the first test); each test gets a schema of its own.
// Skipped, saying why, only where the PostgreSQL server binaries are not installed.
struct Postgres {
  std::optional<std::string> skip_reason = PostgresServer::unavailable();
  std::unique_ptr<Store> open() {
    if (skip_reason) return nullptr;
    return std::make_unique<PostgresStore>(PostgresServer::shared().fresh_store_url());
  }
};

template <class Backend>
class StoreConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    if constexpr (requires { backend.skip_reason; }) {
      if (backend.skip_reason) GTEST_SKIP() << *backend.skip_reason;
    }
  }
  void commit(const Change& change) { store->commit(std::span(&change, 1)); }
  void commit(const std::vector<Change>& batch) { store->commit(batch); }
  std::vector<JobId> job_ids(const JobQuery& q) { return ids_of(store->jobs(q)); }

  Backend backend;
  std::unique_ptr<Store> store = backend.open();
};

struct BackendNames {
  template <class T>
  static std::string GetName(int) {
    if (std::is_same_v<T, Sqlite>) return "Sqlite";
    if (std::is_same_v<T, Postgres>) return "Postgres";
    return "InMemory";
  }
};

using Backends = ::testing::Types<InMemory, Sqlite, Postgres>;
TYPED_TEST_SUITE(StoreConformance, Backends, BackendNames);

TYPED_TEST(StoreConformance, StartsEmptyAtTheLatestSchemaVersion) {
  const LoadedState loaded = this->store->load();
  EXPECT_TRUE(loaded.active_jobs.empty());
  EXPECT_TRUE(loaded.active_attempts.empty());
  EXPECT_TRUE(loaded.nodes.empty());
  EXPECT_TRUE(loaded.shares.empty());
  EXPECT_EQ(loaded.max_job_id, 0);
  EXPECT_EQ(loaded.max_attempt_id, 0);
  EXPECT_FALSE(this->store->job(1));
  EXPECT_TRUE(this->store->jobs({}).empty());
  EXPECT_TRUE(this->store->events_after(0, 10).empty());
  EXPECT_EQ(this->store->last_event_seq(), 0);
  EXPECT_EQ(this->store->schema_version(), latest_schema_version());
}

TYPED_TEST(StoreConformance, AttemptsAreStoredInEveryStateIncludingStoppedToMakeWay) {
  const std::vector<AttemptState> states = {AttemptState::starting,  AttemptState::running,   AttemptState::succeeded,
                                            AttemptState::failed,    AttemptState::cancelled, AttemptState::requeued,
                                            AttemptState::preempted};
  this->commit(Change{.jobs = {minimal_job(1, "alice", "team-a", JobState::pending)}});
  AttemptId id = 30;
  for (AttemptState state : states) {
    const Attempt attempt = minimal_attempt(++id, 1, state);
    this->commit(Change{.attempts = {attempt}});
    EXPECT_EQ(as_json(this->store->attempt(id)), as_json(attempt)) << to_string(state);
  }
}

TYPED_TEST(StoreConformance, JobsRoundTripWithAndWithoutOptionalFields) {
  const std::vector<Job> jobs = {full_job(1), minimal_job(2), simulated_job(3)};
  this->commit(Change{.jobs = jobs});
  for (const Job& j : jobs) {
    EXPECT_EQ(as_json(this->store->job(j.id)), as_json(j)) << "job " << j.id;
  }
  EXPECT_FALSE(this->store->job(4));
}

TYPED_TEST(StoreConformance, AttemptsRoundTripWithAndWithoutOptionalFields) {
  const Attempt full = full_attempt(10, 1);
  const Attempt minimal = minimal_attempt(11, 1);
  this->commit(Change{.jobs = {minimal_job(1)}, .attempts = {full, minimal}});
  EXPECT_EQ(as_json(this->store->attempt(10)), as_json(full));
  EXPECT_EQ(as_json(this->store->attempt(11)), as_json(minimal));
  EXPECT_FALSE(this->store->attempt(12));
}

TYPED_TEST(StoreConformance, NodesRoundTripWithAndWithoutOptionalFields) {
  const Node full = full_node("node-1");
  const Node minimal = minimal_node("node-2");
  this->commit(Change{.nodes = {full, minimal}});
  EXPECT_EQ(as_json(this->store->node("node-1")), as_json(full));
  EXPECT_EQ(as_json(this->store->node("node-2")), as_json(minimal));
  EXPECT_FALSE(this->store->node("node-3"));
}

TYPED_TEST(StoreConformance, TokensAreFoundByHash) {
  const TokenRecord admin{"a1b2", "root", Role::admin, at_ms(1), "tok_a"};
  const TokenRecord agent{"c3d4", "agents", Role::agent, at_ms(2), "tok_b"};
  const TokenRecord user{"e5f6", "alice", Role::user, at_ms(3), "tok_c"};
  this->commit(Change{.tokens = {admin, agent, user}});
  EXPECT_EQ(this->store->token_by_hash("a1b2"), admin);
  EXPECT_EQ(this->store->token_by_hash("c3d4"), agent);
  EXPECT_EQ(this->store->token_by_hash("e5f6"), user);
  EXPECT_FALSE(this->store->token_by_hash("A1B2"));
  const TokenRecord same_time{"0000", "bob", Role::user, at_ms(2), "tok_d"};
  this->commit(Change{.tokens = {same_time}});
  EXPECT_EQ(this->store->tokens(), (std::vector<TokenRecord>{admin, same_time, agent, user}));
}

TYPED_TEST(StoreConformance, TokensKeepTheirIdExpiryAndLastUse) {
  TokenRecord viewer{"a1b2", "vic", Role::viewer, at_ms(1), "tok_1"};
  viewer.expires_at = at_ms(5000);
  const TokenRecord op{"c3d4", "olga", Role::operator_, at_ms(2), "tok_2"};
  this->commit(Change{.tokens = {viewer, op}});
  EXPECT_EQ(this->store->token_by_hash("a1b2"), viewer);
  EXPECT_EQ(this->store->token_by_hash("c3d4"), op) << "no expiry and never used stay absent";
  this->commit(Change{.token_uses = {{"a1b2", at_ms(40)}, {"never-stored", at_ms(41)}}});
  viewer.last_used_at = at_ms(40);
  EXPECT_EQ(this->store->token_by_hash("a1b2"), viewer);
  EXPECT_FALSE(this->store->token_by_hash("never-stored")) << "noting a use must not create a token";
}

TYPED_TEST(StoreConformance, RevokedTokensAreGone) {
  const TokenRecord node{"c3d4", "node:n1", Role::agent, at_ms(2), "tok_n"};
  const TokenRecord user{"e5f6", "alice", Role::user, at_ms(3), "tok_u"};
  this->commit(Change{.tokens = {node, user}});
  this->commit(Change{.revoked_tokens = {"c3d4", "never-stored"}});
  EXPECT_FALSE(this->store->token_by_hash("c3d4"));
  this->commit(Change{.token_uses = {{"c3d4", at_ms(9)}}});
  EXPECT_FALSE(this->store->token_by_hash("c3d4")) << "a late use of a revoked token brought it back";
  EXPECT_EQ(this->store->tokens(), std::vector<TokenRecord>{user});
}

TYPED_TEST(StoreConformance, SharesRoundTripThroughLoadInNameOrder) {
  ShareRecord capped{"team-b", 2.5, 64, 1234.75, at_ms(9)};
  capped.storage_limit_mb = 2048;
  const ShareRecord uncapped{"team-a", 1.0, std::nullopt, 0.0, at_ms(0)};
  this->commit(Change{.shares = {capped, uncapped}});
  EXPECT_EQ(this->store->load().shares, (std::vector<ShareRecord>{uncapped, capped}));
}

TYPED_TEST(StoreConformance, SharesKeepWhetherAnAdminCreatedThemAndTheirMembers) {
  ShareRecord members_only{"team-a", 1.0, std::nullopt, 0.0, at_ms(0)};
  members_only.created = true;
  members_only.members = std::vector<std::string>{"alice", "bob"};
  ShareRecord open{"team-b", 1.0, std::nullopt, 0.0, at_ms(0)};
  open.created = true;
  ShareRecord nobody{"team-c", 1.0, std::nullopt, 0.0, at_ms(0)};
  nobody.created = true;
  nobody.members = std::vector<std::string>{};
  const ShareRecord usage_only{"team-d", 1.0, std::nullopt, 3.0, at_ms(1)};
  this->commit(Change{.shares = {members_only, open, nobody, usage_only}});
  EXPECT_EQ(this->store->load().shares, (std::vector<ShareRecord>{members_only, open, nobody, usage_only}));
  open.members = std::vector<std::string>{"carol"};
  members_only.members.reset();
  this->commit(Change{.shares = {members_only, open}});
  EXPECT_EQ(this->store->load().shares, (std::vector<ShareRecord>{members_only, open, nobody, usage_only}));
}

TYPED_TEST(StoreConformance, ADeletedShareIsGoneAndAnUpsertInTheSameChangeDoesNotBringItBack) {
  const ShareRecord kept{"team-a", 1.0, std::nullopt, 0.0, at_ms(0)};
  const ShareRecord deleted{"team-b", 2.0, 8, 5.0, at_ms(1)};
  this->commit(Change{.shares = {kept, deleted}});
  this->commit(Change{.shares = {deleted}, .deleted_shares = {"team-b", "never-stored"}});
  EXPECT_EQ(this->store->load().shares, std::vector<ShareRecord>{kept});
}

TYPED_TEST(StoreConformance, EventsBeforeReadTheLogBackNewestFirst) {
  this->commit(Change{.events = {event("a"), event("b"), event("c"), event("d")}});
  const std::vector<Event> all = this->store->events_after(0, 10);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(this->store->events_before(INT64_MAX, 2), (std::vector<Event>{all[3], all[2]}));
  EXPECT_EQ(this->store->events_before(all[2].seq, 10), (std::vector<Event>{all[1], all[0]}));
  EXPECT_TRUE(this->store->events_before(all[0].seq, 10).empty());
}

TYPED_TEST(StoreConformance, EventsGetIncreasingSeqInBatchOrder) {
  std::vector<Event> sent = {event("job.submitted", 1), event("attempt.state", 1, 10), event("node.state", {}, {}, "n1")};
  this->commit({Change{.jobs = {minimal_job(1)}, .events = {sent[0], sent[1]}}, Change{.events = {sent[2]}}});
  const Event later = event("job.state", 1);
  this->commit(Change{.events = {later}});
  sent.push_back(later);

  const std::vector<Event> all = this->store->events_after(0, 100);
  ASSERT_EQ(all.size(), sent.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i > 0) {
      EXPECT_GT(all[i].seq, all[i - 1].seq);
    }
    Event expected = sent[i];
    expected.seq = all[i].seq;
    EXPECT_EQ(all[i], expected);
  }
  EXPECT_EQ(this->store->events_after(all[0].seq, 2), (std::vector<Event>{all[1], all[2]}));
  EXPECT_EQ(this->store->last_event_seq(), all.back().seq);
  EXPECT_TRUE(this->store->events_after(all.back().seq, 10).empty());
}

TYPED_TEST(StoreConformance, EventsKeepSeverityOwnerShareAndDetails) {
  Event failed = event("job.failed", 1, 10, "n1");
  failed.severity = Severity::error;
  failed.user = "alice";
  failed.share = "vision";
  failed.details = Json{{"class", "node_lost"}, {"exit_code", -9}, {"nodes", {"n1", "n2"}}};
  Event drained = event("node.drained", {}, {}, "n2");
  drained.severity = Severity::warning;
  this->commit(Change{.jobs = {minimal_job(1)}, .events = {failed, drained}});
  const std::vector<Event> all = this->store->events_after(0, 10);
  ASSERT_EQ(all.size(), 2u);
  failed.seq = all[0].seq;
  drained.seq = all[1].seq;
  EXPECT_EQ(all[0], failed);
  EXPECT_EQ(all[1], drained);
  EXPECT_EQ(all[1].details, Json::object());
}

TYPED_TEST(StoreConformance, PruneDeletesOnlyOldEventsBelowTheKeepBoundAndNeverReusesSeq) {
  auto at = [](std::int64_t ms, std::string kind) {
    Event e = event(std::move(kind));
    e.at = at_ms(ms);
    return e;
  };
  this->commit(Change{.events = {at(1000, "a"), at(2000, "b"), at(3000, "c"), at(1500, "d")}});
  const std::vector<Event> all = this->store->events_after(0, 10);
  ASSERT_EQ(all.size(), 4u);
  // Old enough: a (1000), d (1500) and b (2000 is not below 2000: kept); d is at or above the bound.
  EXPECT_EQ(this->store->prune_events(at_ms(2000), all[3].seq), 1);
  EXPECT_EQ(this->store->events_after(0, 10), (std::vector<Event>{all[1], all[2], all[3]}));
  EXPECT_EQ(this->store->prune_events(at_ms(10'000), INT64_MAX), 3);
  EXPECT_TRUE(this->store->events_after(0, 10).empty());
  this->commit(Change{.events = {at(4000, "e")}});
  const std::vector<Event> after = this->store->events_after(0, 10);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_GT(after[0].seq, all[3].seq) << "a pruned seq is never handed out again";
}

TYPED_TEST(StoreConformance, EventsOfKindMatchOnlyThePrefixOldestFirstAfterTheCursor) {
  this->commit(Change{.events = {event("audit.job.submitted", 1), event("job.state", 1), event("audit_x", 1),
                                 event("audit.node.drained", {}, {}, "n1"), event("audit.token.created")}});
  const std::vector<Event> all = this->store->events_after(0, 100);
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(this->store->events_of_kind("audit.", 0, 100), (std::vector<Event>{all[0], all[3], all[4]}));
  EXPECT_EQ(this->store->events_of_kind("audit.", all[0].seq, 1), (std::vector<Event>{all[3]}));
  EXPECT_TRUE(this->store->events_of_kind("audit.", all[4].seq, 10).empty());
  EXPECT_TRUE(this->store->events_of_kind("audit%", 0, 10).empty());  // no LIKE wildcards
}

TYPED_TEST(StoreConformance, UpsertReplacesWholeRecordsAndTheirQueryColumns) {
  this->commit(Change{.jobs = {full_job(1)},
                      .attempts = {full_attempt(10, 1)},
                      .nodes = {full_node("n1")},
                      .tokens = {TokenRecord{"h", "alice", Role::admin, at_ms(1)}},
                      .shares = {ShareRecord{"team-a", 3, 16, 5, at_ms(1)}}});
  // Replacements that unset optional fields and move the job to another state, share and user.
  const Job job = minimal_job(1, "carol", "team-b", JobState::cancelled);
  const Attempt attempt = minimal_attempt(10, 1, AttemptState::running);
  const Node node = minimal_node("n1");
  const TokenRecord token{"h", "dave", Role::user, at_ms(2)};
  const ShareRecord share{"team-a", 1, std::nullopt, 0, at_ms(2)};
  this->commit(Change{.jobs = {job}, .attempts = {attempt}, .nodes = {node}, .tokens = {token}, .shares = {share}});

  EXPECT_EQ(as_json(this->store->job(1)), as_json(job));
  EXPECT_EQ(as_json(this->store->attempt(10)), as_json(attempt));
  EXPECT_EQ(as_json(this->store->node("n1")), as_json(node));
  EXPECT_EQ(this->store->token_by_hash("h"), token);
  EXPECT_EQ(this->store->load().shares, std::vector<ShareRecord>{share});
  EXPECT_TRUE(this->job_ids({.states = {JobState::running}}).empty());
  EXPECT_TRUE(this->job_ids({.share = "team-a"}).empty());
  EXPECT_TRUE(this->job_ids({.user = "alice"}).empty());
  EXPECT_EQ(this->job_ids({.states = {JobState::cancelled}, .share = "team-b", .user = "carol"}),
            std::vector<JobId>{1});
  EXPECT_EQ(ids_of(this->store->load().active_attempts), std::vector<std::int64_t>{10});
}

TYPED_TEST(StoreConformance, LaterChangesInABatchWin) {
  const Job running = minimal_job(1, "bob", "default", JobState::running);
  this->commit({Change{.jobs = {minimal_job(1)}}, Change{.jobs = {running}}});
  EXPECT_EQ(as_json(this->store->job(1)), as_json(running));
}

TYPED_TEST(StoreConformance, FiltersJobsByStateShareAndUser) {
  this->commit(Change{.jobs = {minimal_job(1, "alice", "team-a", JobState::pending),
                               minimal_job(2, "bob", "team-a", JobState::running),
                               minimal_job(3, "alice", "team-b", JobState::running),
                               minimal_job(4, "bob", "team-b", JobState::succeeded),
                               minimal_job(5, "alice", "team-a", JobState::running)}});
  using Ids = std::vector<JobId>;
  EXPECT_EQ(this->job_ids({}), (Ids{5, 4, 3, 2, 1}));
  EXPECT_EQ(this->job_ids({.states = {JobState::running}}), (Ids{5, 3, 2}));
  EXPECT_EQ(this->job_ids({.share = "team-a"}), (Ids{5, 2, 1}));
  EXPECT_EQ(this->job_ids({.user = "alice"}), (Ids{5, 3, 1}));
  EXPECT_EQ(this->job_ids({.states = {JobState::running}, .user = "alice"}), (Ids{5, 3}));
  EXPECT_EQ(this->job_ids({.states = {JobState::running}, .share = "team-a", .user = "bob"}), (Ids{2}));
  EXPECT_TRUE(this->job_ids({.states = {JobState::failed}}).empty());
  EXPECT_TRUE(this->job_ids({.user = "nobody"}).empty());
}

// History (GET /v1/jobs): any of several states, a window of submission times, ids above a cursor.
TYPED_TEST(StoreConformance, FiltersJobsByStatesSubmissionWindowAndAfterId) {
  this->commit(Change{
      .jobs = {minimal_job(1, "a", "default", JobState::succeeded), minimal_job(2, "a", "default", JobState::failed),
               minimal_job(3, "a", "default", JobState::cancelled), minimal_job(4, "a", "default", JobState::running),
               minimal_job(5, "a", "default", JobState::failed)}});
  using Ids = std::vector<JobId>;
  EXPECT_EQ(this->job_ids({.states = {JobState::failed, JobState::cancelled}}), (Ids{5, 3, 2}));
  EXPECT_EQ(this->job_ids({.submitted_since = at_ms(2), .submitted_until = at_ms(4)}), (Ids{3, 2}));
  EXPECT_EQ(this->job_ids({.after_id = 3}), (Ids{5, 4}));
  EXPECT_EQ(this->job_ids({.states = {JobState::failed}, .after_id = 2}), (Ids{5}));
}

TYPED_TEST(StoreConformance, PaginatesNewestFirstWithABeforeIdCursor) {
  Change change;
  for (JobId id = 3; id <= 30; id += 3) change.jobs.push_back(minimal_job(id, id % 2 ? "odd" : "even"));
  this->commit(change);

  // Walk every page the way the API does: the next cursor is the last id of the page.
  const auto walk = [this](JobQuery q) {
    std::vector<std::vector<JobId>> pages;
    for (;;) {
      auto page = this->job_ids(q);
      if (page.empty()) return pages;
      q.before_id = page.back();
      pages.push_back(std::move(page));
    }
  };
  using Pages = std::vector<std::vector<JobId>>;
  EXPECT_EQ(walk({.limit = 4}), (Pages{{30, 27, 24, 21}, {18, 15, 12, 9}, {6, 3}}));
  EXPECT_EQ(walk({.user = "odd", .limit = 2}), (Pages{{27, 21}, {15, 9}, {3}}));
  EXPECT_EQ(this->job_ids({.before_id = 16, .limit = 2}), (std::vector<JobId>{15, 12}));
}

TYPED_TEST(StoreConformance, LoadRebuildsActiveWorkAndTheHighestIds) {
  this->commit(Change{.jobs = {minimal_job(1, "a", "default", JobState::pending),
                               minimal_job(2, "a", "default", JobState::running),
                               minimal_job(4, "a", "default", JobState::starting),
                               minimal_job(3, "a", "default", JobState::cancelled),
                               // The highest ids belong to terminal records and must count anyway.
                               minimal_job(9, "a", "default", JobState::failed)},
                      .attempts = {minimal_attempt(20, 2, AttemptState::running),
                                   minimal_attempt(21, 4, AttemptState::starting),
                                   minimal_attempt(22, 9, AttemptState::failed),
                                   minimal_attempt(23, 9, AttemptState::succeeded)},
                      .nodes = {minimal_node("b"), full_node("a")}});
  const LoadedState loaded = this->store->load();
  EXPECT_EQ(ids_of(loaded.active_jobs), (std::vector<std::int64_t>{1, 2, 4}));
  EXPECT_EQ(as_json(loaded.active_attempts),
            as_json(std::vector<Attempt>{minimal_attempt(20, 2, AttemptState::running),
                                         minimal_attempt(21, 4, AttemptState::starting)}));
  EXPECT_EQ(as_json(loaded.nodes), as_json(std::vector<Node>{full_node("a"), minimal_node("b")}));
  EXPECT_EQ(loaded.max_job_id, 9);
  EXPECT_EQ(loaded.max_attempt_id, 23);
}

TYPED_TEST(StoreConformance, AttemptsOfAJobComeInIdOrder) {
  this->commit(Change{.jobs = {minimal_job(1), minimal_job(2)},
                      .attempts = {minimal_attempt(7, 1), minimal_attempt(5, 1), minimal_attempt(6, 2),
                                   minimal_attempt(8, 1)}});
  EXPECT_EQ(ids_of(this->store->attempts_of(1)), (std::vector<std::int64_t>{5, 7, 8}));
  EXPECT_EQ(ids_of(this->store->attempts_of(2)), (std::vector<std::int64_t>{6}));
  EXPECT_TRUE(this->store->attempts_of(3).empty());
}

TYPED_TEST(StoreConformance, AttemptsOfManyJobsComeByJobThenId) {
  this->commit(Change{.jobs = {minimal_job(1), minimal_job(2), minimal_job(3)},
                      .attempts = {minimal_attempt(7, 2), minimal_attempt(5, 1), minimal_attempt(6, 2),
                                   minimal_attempt(8, 1), minimal_attempt(9, 3)}});
  const std::vector<JobId> jobs = {2, 1, 4};
  EXPECT_EQ(ids_of(this->store->attempts_of_jobs(jobs)), (std::vector<std::int64_t>{5, 8, 6, 7}));
  EXPECT_TRUE(this->store->attempts_of_jobs(std::vector<JobId>{}).empty());
}

TYPED_TEST(StoreConformance, AttemptsRunningSinceATimeAreTheUnendedAndTheLateEndedByJob) {
  const auto ended_at = [](Attempt a, std::int64_t ms) {
    a.ended_at = from_unix_ms(ms);
    return a;
  };
  this->commit(Change{.jobs = {minimal_job(1), minimal_job(2)},
                      .attempts = {ended_at(minimal_attempt(5, 2, AttemptState::failed), 1'000),
                                   ended_at(minimal_attempt(6, 1, AttemptState::failed), 2'000),
                                   minimal_attempt(7, 2, AttemptState::running),
                                   ended_at(minimal_attempt(8, 1, AttemptState::succeeded), 3'000)}});
  const auto since = [&](std::int64_t ms, JobId before_job = INT64_MAX, int limit = 100) {
    return ids_of(this->store->attempts_running_since(from_unix_ms(ms), before_job, limit));
  };
  EXPECT_EQ(since(2'000), (std::vector<std::int64_t>{7, 8, 6})) << "newest job first, newest attempt first";
  EXPECT_EQ(since(2'001), (std::vector<std::int64_t>{7, 8}));
  EXPECT_EQ(since(2'000, INT64_MAX, 2), (std::vector<std::int64_t>{7, 8})) << "a page ends mid-job";
  EXPECT_EQ(since(2'000, 2), (std::vector<std::int64_t>{8, 6})) << "the next page: the jobs below 2";
  EXPECT_TRUE(since(2'000, 1).empty());
  // An attempt that ends later leaves the set only once its end is stored.
  this->commit(Change{.attempts = {ended_at(minimal_attempt(7, 2, AttemptState::succeeded), 2'500)}});
  EXPECT_EQ(since(2'600), (std::vector<std::int64_t>{8}));
}

// A job's submission, start and end can share one group commit (a trivial job); the stores may
// write each row once, but what is stored and found is always its last version.
TYPED_TEST(StoreConformance, ARowChangedSeveralTimesInABatchEndsAsItsLastVersionWithItsQueryColumns) {
  const Job ended = minimal_job(1, "carol", "team-b", JobState::succeeded);
  Attempt attempt_ended = minimal_attempt(1, 1, AttemptState::succeeded);
  attempt_ended.ended_at = at_ms(9);
  this->commit({Change{.jobs = {minimal_job(1)}},
                Change{.jobs = {minimal_job(1, "bob", "default", JobState::running), minimal_job(2)},
                       .attempts = {minimal_attempt(1, 1)}},
                Change{.jobs = {minimal_job(1, "bob", "default", JobState::starting), ended},
                       .attempts = {minimal_attempt(1, 1, AttemptState::running), attempt_ended}}});
  EXPECT_EQ(as_json(this->store->job(1)), as_json(ended));
  EXPECT_EQ(as_json(this->store->attempt(1)), as_json(attempt_ended));
  EXPECT_EQ(this->job_ids({.states = {JobState::succeeded}, .share = "team-b", .user = "carol"}), std::vector<JobId>{1});
  EXPECT_EQ(this->job_ids({.states = {JobState::pending, JobState::running, JobState::starting}}), std::vector<JobId>{2});
  EXPECT_TRUE(this->store->load().active_attempts.empty());
}

TYPED_TEST(StoreConformance, AnAttemptMayNameAJobFromEarlierInTheSameBatch) {
  this->commit({Change{.jobs = {minimal_job(1)}}, Change{.attempts = {minimal_attempt(1, 1)}}});
  EXPECT_EQ(ids_of(this->store->attempts_of(1)), (std::vector<std::int64_t>{1}));
}

TYPED_TEST(StoreConformance, AFailingBatchLeavesNothingBehind) {
  const Job before = minimal_job(1);
  this->commit(Change{.jobs = {before}, .events = {event("job.submitted", 1)}});
  const std::int64_t last_seq = this->store->events_after(0, 10).back().seq;

  const std::vector<Change> batch = {
      Change{.jobs = {minimal_job(1, "bob", "default", JobState::running), minimal_job(2)},
             .attempts = {minimal_attempt(1, 1)},
             .nodes = {full_node("n1")},
             .tokens = {TokenRecord{"h", "alice", Role::admin, at_ms(0)}},
             .shares = {ShareRecord{"team-a", 1, std::nullopt, 0, at_ms(0)}},
             .events = {event("job.state", 1)}},
      // Job 404 was never stored: this change fails, and with it the whole batch.
      Change{.attempts = {minimal_attempt(2, 404)}},
  };
  EXPECT_THROW(this->commit(batch), StoreError);

  EXPECT_EQ(as_json(this->store->job(1)), as_json(before));
  EXPECT_FALSE(this->store->job(2));
  EXPECT_FALSE(this->store->attempt(1));
  EXPECT_FALSE(this->store->node("n1"));
  EXPECT_FALSE(this->store->token_by_hash("h"));
  EXPECT_TRUE(this->store->events_after(last_seq, 10).empty());
  const LoadedState loaded = this->store->load();
  EXPECT_TRUE(loaded.shares.empty());
  EXPECT_EQ(loaded.max_job_id, 1);
  EXPECT_EQ(loaded.max_attempt_id, 0);

  // The store is still usable, and the event sequence still only moves forward.
  this->commit(Change{.jobs = {minimal_job(2)}, .events = {event("job.submitted", 2)}});
  EXPECT_TRUE(this->store->job(2));
  const auto events = this->store->events_after(last_seq, 10);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].job_id, 2);
}

TYPED_TEST(StoreConformance, MetricsComeBackByStepThenAttemptWithNaNKept) {
  this->commit(Change{.jobs = {minimal_job(1), minimal_job(2)},
                      .attempts = {minimal_attempt(10, 1), minimal_attempt(11, 1), minimal_attempt(12, 2)}});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto row = [](JobId job, AttemptId attempt, std::int64_t step, double loss) {
    return MetricRecord{job, attempt, StepMetric{step, loss, 0.5 * step, 10.0, 1e-3, 256.0, step == 2, std::nullopt}};
  };
  MetricRecord ended_spike = row(1, 10, 3, 1.5);
  ended_spike.metric.spike_steps_to_return = 1;
  this->commit(Change{.metrics = {row(1, 11, 2, 1.9), row(1, 10, 1, 2.0), row(1, 10, 2, nan), ended_spike,
                                  row(2, 12, 1, 7.0)}});
  // A resent batch (after an agent reconnects) replaces rather than duplicates.
  this->commit(Change{.metrics = {row(1, 10, 1, 2.0)}});

  const auto rows = this->store->metrics_of(1);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].metric.step, 1);
  EXPECT_EQ(rows[0].metric.loss, 2.0);
  EXPECT_EQ(rows[0].metric.grad_norm, 0.5);
  EXPECT_EQ(rows[0].metric.samples_per_s, 256.0);
  EXPECT_EQ(rows[1].attempt_id, 10);
  EXPECT_EQ(rows[1].metric.step, 2);
  EXPECT_TRUE(std::isnan(rows[1].metric.loss));
  EXPECT_TRUE(rows[1].metric.spike);
  EXPECT_EQ(rows[2].attempt_id, 11);
  EXPECT_EQ(rows[2].metric.loss, 1.9);
  EXPECT_EQ(rows[3].metric.spike_steps_to_return, 1);
  EXPECT_FALSE(rows[3].metric.spike);
  EXPECT_EQ(this->store->metrics_of(2).size(), 1u);
  EXPECT_TRUE(this->store->metrics_of(3).empty());
}

TYPED_TEST(StoreConformance, HealthChecksAndNodeHistoryRoundTrip) {
  const HealthCheckRow check{7, "periodic", at_ms(5), Json{{"id", 7}, {"verdicts", {{{"node", "n1"}, {"state", "UNHEALTHY"}}}}}};
  this->commit(Change{.health_checks = {check, HealthCheckRow{3, "registration", at_ms(1), Json{{"id", 3}}}},
                      .node_health = {NodeHealthRow{"n1", 3, at_ms(1), "HEALTHY", Json{{"reason", ""}}},
                                      NodeHealthRow{"n1", 7, at_ms(5), "UNHEALTHY", Json{{"reason", "core 3: GEMM off"}}},
                                      NodeHealthRow{"n2", 7, at_ms(5), "HEALTHY", Json::object()}}});
  EXPECT_EQ(this->store->health_check(7), check);
  EXPECT_FALSE(this->store->health_check(8));
  const auto recent = this->store->recent_health_checks(INT64_MAX, 10);
  ASSERT_EQ(recent.size(), 2u);
  EXPECT_EQ(recent[0], check) << "newest first";
  EXPECT_EQ(recent[1].id, 3);
  EXPECT_EQ(this->store->recent_health_checks(INT64_MAX, 1).size(), 1u);
  const auto older = this->store->recent_health_checks(7, 10);
  ASSERT_EQ(older.size(), 1u) << "the page below id 7";
  EXPECT_EQ(older[0].id, 3);
  const auto history = this->store->node_health("n1", INT64_MAX, 10);
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0].check_id, 7) << "newest first";
  EXPECT_EQ(history[0].state, "UNHEALTHY");
  EXPECT_EQ(history[0].record["reason"], "core 3: GEMM off");
  EXPECT_EQ(history[1].at, at_ms(1));
  EXPECT_EQ(this->store->node_health("n1", INT64_MAX, 1).size(), 1u);
  const auto older_history = this->store->node_health("n1", 7, 10);
  ASSERT_EQ(older_history.size(), 1u) << "below check 7";
  EXPECT_EQ(older_history[0].check_id, 3);
  EXPECT_TRUE(this->store->node_health("n3", INT64_MAX, 10).empty());
  EXPECT_EQ(this->store->load().max_health_check_id, 7);
}

TYPED_TEST(StoreConformance, ClusterSamplesComeBackInTimeOrderAndRetentionDeletesTheOlderOnes) {
  const auto sample = [](std::int64_t ms, int allocated) {
    return ClusterSampleRow{at_ms(ms), Json{{"allocated_cores", allocated}}};
  };
  this->commit(Change{.cluster_samples = {sample(3000, 3), sample(1000, 1), sample(2000, 2)}});
  this->commit(Change{.cluster_samples = {sample(2000, 20)}});  // the same time again: replaced
  const auto all = this->store->cluster_samples_since(at_ms(0));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0], sample(1000, 1)) << "oldest first";
  EXPECT_EQ(all[1], sample(2000, 20));
  EXPECT_EQ(all[2].at, at_ms(3000));
  EXPECT_EQ(this->store->cluster_samples_since(at_ms(2000)).size(), 2u) << "from is inclusive";
  this->commit(Change{.cluster_samples = {sample(4000, 4)}, .cluster_samples_kept_from = at_ms(3000)});
  const auto kept = this->store->cluster_samples_since(at_ms(0));
  ASSERT_EQ(kept.size(), 2u) << "the samples before 3000 are gone, the new one stays";
  EXPECT_EQ(kept[0].at, at_ms(3000));
  EXPECT_EQ(kept[1], sample(4000, 4));
}

TYPED_TEST(StoreConformance, MetricsOfAnUnknownAttemptFailTheBatch) {
  this->commit(Change{.jobs = {minimal_job(1)}});
  EXPECT_THROW(this->commit(Change{.metrics = {MetricRecord{1, 99, StepMetric{1, 1, 1, 1, 1, 1, false, std::nullopt}}}}),
               StoreError);
  EXPECT_TRUE(this->store->metrics_of(1).empty());
}

TYPED_TEST(StoreConformance, CheckpointsComeBackByStepAndARewrittenStepKeepsItsNewestReport) {
  this->commit(Change{.jobs = {minimal_job(1), minimal_job(2)},
                      .attempts = {minimal_attempt(10, 1), minimal_attempt(11, 1), minimal_attempt(12, 2)}});
  const CheckpointRecord a{1, 10, 20, std::string(64, 'a'), at_ms(1)};
  const CheckpointRecord b{1, 10, 10, std::string(64, 'b'), at_ms(2)};
  const CheckpointRecord other{2, 12, 5, std::string(64, 'c'), at_ms(3)};
  this->commit(Change{.checkpoints = {a, b, other}});
  // A retry resumed at step 10 and wrote step 20 again.
  const CheckpointRecord rewritten{1, 11, 20, std::string(64, 'd'), at_ms(4)};
  this->commit(Change{.checkpoints = {rewritten}});
  EXPECT_EQ(this->store->checkpoints_of(1), (std::vector<CheckpointRecord>{b, rewritten}));
  EXPECT_EQ(this->store->checkpoints_of(2), std::vector<CheckpointRecord>{other});
  EXPECT_TRUE(this->store->checkpoints_of(3).empty());
  EXPECT_THROW(this->commit(Change{.checkpoints = {CheckpointRecord{1, 99, 30, std::string(64, 'e'), at_ms(5)}}}), StoreError);
}

TYPED_TEST(StoreConformance, AnEmptyBatchChangesNothing) {
  this->commit(std::vector<Change>{});
  this->commit(Change{});
  EXPECT_TRUE(this->store->jobs({}).empty());
  EXPECT_TRUE(this->store->events_after(0, 10).empty());
}

WebhookRecord webhook(std::int64_t id, std::int64_t cursor = 0) {
  return WebhookRecord{id, "alice", at_ms(1000 + id), "https://hooks.example.com/" + std::to_string(id), {"job.*", "node.down"},
                       "slack", Json{{"share", "vision"}}, "whsec_" + std::to_string(id), cursor, id % 2 == 0};
}

WebhookDelivery delivery(std::int64_t webhook_id, std::int64_t n, DeliveryState state, std::int64_t first, std::int64_t last) {
  WebhookDelivery d{webhook_id, n, first, last, state, 2, at_ms(50), std::nullopt, Json::array()};
  if (state == DeliveryState::pending) d.next_attempt_at = at_ms(90);
  d.log.push_back({{"at", "1970-01-01T00:00:00.050Z"}, {"status", 500}, {"latency_ms", 12}, {"error", "HTTP 500"}});
  return d;
}

TYPED_TEST(StoreConformance, WebhooksRoundTripThroughLoadWithTheirSecretAndCursor) {
  this->commit(Change{.webhooks = {webhook(2), webhook(1, 7)}});
  this->commit(Change{.webhook_cursors = {{2, 11}, {99, 5}}});  // an unknown webhook's cursor is ignored
  WebhookRecord moved = webhook(2, 11);
  const LoadedState loaded = this->store->load();
  EXPECT_EQ(loaded.webhooks, (std::vector<WebhookRecord>{webhook(1, 7), moved}));
  EXPECT_EQ(loaded.max_webhook_id, 2);
}

TYPED_TEST(StoreConformance, DeletedWebhooksTakeTheirDeliveriesAndKeepTheirIdUsed) {
  this->commit(Change{.webhooks = {webhook(1), webhook(2)},
                      .webhook_deliveries = {delivery(1, 1, DeliveryState::delivered, 1, 1),
                                             delivery(2, 1, DeliveryState::pending, 1, 1)}});
  this->commit(Change{.deleted_webhooks = {2}});
  this->commit(Change{.webhook_deliveries = {delivery(2, 2, DeliveryState::pending, 2, 2)}});  // late: ignored
  const LoadedState loaded = this->store->load();
  EXPECT_EQ(loaded.webhooks, std::vector<WebhookRecord>{webhook(1)});
  EXPECT_EQ(loaded.max_webhook_id, 2);
  EXPECT_TRUE(this->store->webhook_deliveries(2, std::nullopt, 10).empty());
  EXPECT_EQ(this->store->webhook_deliveries(1, std::nullopt, 10).size(), 1u);
}

TYPED_TEST(StoreConformance, DeliveriesPageNewestFirstAndOpenOnesComeInOrder) {
  this->commit(Change{.webhooks = {webhook(1), webhook(2)}});
  const WebhookDelivery d1 = delivery(1, 1, DeliveryState::delivered, 1, 1);
  const WebhookDelivery d2 = delivery(1, 2, DeliveryState::dead, 2, 4);
  WebhookDelivery d3 = delivery(1, 3, DeliveryState::pending, 5, 5);
  const WebhookDelivery d4 = delivery(1, 4, DeliveryState::retrying, 2, 4);
  this->commit(Change{.webhook_deliveries = {d1, d2, d3, d4, delivery(2, 1, DeliveryState::pending, 9, 9)}});
  EXPECT_EQ(this->store->webhook_deliveries(1, std::nullopt, 10), (std::vector<WebhookDelivery>{d4, d3, d2, d1}));
  EXPECT_EQ(this->store->webhook_deliveries(1, 3, 1), std::vector<WebhookDelivery>{d2});
  EXPECT_EQ(this->store->open_webhook_deliveries(1), (std::vector<WebhookDelivery>{d3, d4}));
  d3.state = DeliveryState::delivered;
  d3.attempts = 3;
  d3.next_attempt_at.reset();
  this->commit(Change{.webhook_deliveries = {d3}});
  EXPECT_EQ(this->store->open_webhook_deliveries(1), std::vector<WebhookDelivery>{d4});
  EXPECT_EQ(this->store->webhook_deliveries(1, std::nullopt, 10)[1], d3);
}

TYPED_TEST(StoreConformance, RetentionKeepsWhatAnyWebhookStillNeeds) {
  EXPECT_EQ(this->store->webhooks_keep_from_seq(), std::nullopt);
  this->commit(Change{.webhooks = {webhook(1, 40), webhook(2, 30)}});
  EXPECT_EQ(this->store->webhooks_keep_from_seq(), 31);
  this->commit(Change{.webhook_deliveries = {delivery(1, 1, DeliveryState::retrying, 12, 14),
                                             delivery(1, 2, DeliveryState::dead, 3, 3)}});
  EXPECT_EQ(this->store->webhooks_keep_from_seq(), 12);  // a dead letter alone holds nothing back
}

TYPED_TEST(StoreConformance, PruneTakesFinishedDeliveriesWhoseEventsWentButNeverOpenOnesOrTheNewest) {
  auto at = [](std::int64_t ms) {
    Event e = event("job.failed");
    e.at = at_ms(ms);
    return e;
  };
  this->commit(Change{.events = {at(1000), at(1000), at(1000), at(1000), at(9000)}});
  const std::vector<Event> all = this->store->events_after(0, 10);
  ASSERT_EQ(all.size(), 5u);
  const auto seq = [&](int i) { return all[static_cast<std::size_t>(i)].seq; };
  this->commit(Change{.webhooks = {webhook(1), webhook(2)}});
  const WebhookDelivery delivered = delivery(1, 1, DeliveryState::delivered, seq(0), seq(0));
  const WebhookDelivery dead = delivery(1, 2, DeliveryState::dead, seq(1), seq(1));
  const WebhookDelivery pending = delivery(1, 3, DeliveryState::pending, seq(2), seq(2));
  const WebhookDelivery reaches_kept = delivery(1, 4, DeliveryState::delivered, seq(3), seq(4));
  const WebhookDelivery newest = delivery(1, 5, DeliveryState::delivered, seq(4), seq(4));
  const WebhookDelivery only_of_2 = delivery(2, 1, DeliveryState::dead, seq(0), seq(0));
  this->commit(Change{.webhook_deliveries = {delivered, dead, pending, reaches_kept, newest, only_of_2}});
  // Events 0 and 1 go: the pending delivery needs 2, so it and all after it stay.
  EXPECT_EQ(this->store->prune_events(at_ms(5000), seq(2)), 2);
  EXPECT_EQ(this->store->webhook_deliveries(1, std::nullopt, 10),
            (std::vector<WebhookDelivery>{newest, reaches_kept, pending}));
  EXPECT_EQ(this->store->prune_events(at_ms(5000), INT64_MAX), 2);
  EXPECT_EQ(this->store->webhook_deliveries(1, std::nullopt, 10),
            (std::vector<WebhookDelivery>{newest, reaches_kept, pending}))
      << "a pending delivery stays whatever its events' age";
  EXPECT_EQ(this->store->webhook_deliveries(2, std::nullopt, 10), std::vector<WebhookDelivery>{only_of_2})
      << "a webhook's newest stays";
}

}  // namespace
}  // namespace trainyard::store
