// The events contract (daemon/events/events.h): each type emitted in the change it tells of, with its
// owner, share, severity and details; the audit record in the same transaction; GET /v1/events'
// filters, visibility and bad input.
#include <gtest/gtest.h>

#include "daemon/events/events.h"
#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

using namespace std::chrono_literals;

const char* const kOneAttempt =
    R"({"name":"train","share":"default","nodes":1,"wait_for_capacity":true,"retry":{"attempts":1},"command":{"argv":["/bin/true"]}})";
const char* const kTwoAttempts =
    R"({"name":"train","nodes":1,"wait_for_capacity":true,"retry":{"attempts":2},"command":{"argv":["/bin/true"]}})";

class EventsTest : public ApiTest {
 protected:
  std::vector<store::Event> all() { return cluster.memory.events_after(0, 100'000); }
  std::vector<store::Event> of(const std::string& kind) {
    std::vector<store::Event> out;
    for (const store::Event& e : all()) {
      if (e.kind == kind) out.push_back(e);
    }
    return out;
  }
  store::Event only(const std::string& kind) {
    const std::vector<store::Event> found = of(kind);
    EXPECT_EQ(found.size(), 1u) << kind;
    return found.empty() ? store::Event{} : found.front();
  }
  AttemptId run_on_n1(const char* body) {
    const Reply r = call("POST", "/v1/jobs", kAlice, body);
    EXPECT_EQ(r.status, 201) << r.text;
    cluster.connect("n1");
    const AttemptId attempt = cluster.agents["n1"]->launches().back().attempt_id;
    cluster.started("n1", attempt);
    return attempt;
  }
};

TEST_F(EventsTest, AJobsLifeIsSubmittedStartedSucceededWithItsOwnerAndShare) {
  const AttemptId attempt = run_on_n1(kOneAttempt);
  cluster.exited("n1", attempt, 0);
  const store::Event& submitted = only("job.submitted");
  EXPECT_EQ(submitted.user, "alice");
  EXPECT_EQ(submitted.share, "default");
  EXPECT_EQ(submitted.severity, store::Severity::info);
  EXPECT_EQ(submitted.job_id, JobId{1});
  EXPECT_EQ(only("audit.job.submitted").seq, submitted.seq + 1) << "the audit record is in the submission's change";
  const store::Event& started = only("job.started");
  EXPECT_EQ(started.attempt_id, attempt);
  EXPECT_EQ(started.node, "n1");
  const store::Event& succeeded = only("job.succeeded");
  EXPECT_EQ(succeeded.details["exit_code"], 0);
  EXPECT_EQ(succeeded.user, "alice");
  EXPECT_LT(started.seq, succeeded.seq);
  EXPECT_EQ(only("node.registered").node, "n1");
}

TEST_F(EventsTest, AFailureCarriesItsClassSuggestionExitCodeAndNode) {
  const AttemptId attempt = run_on_n1(kOneAttempt);
  cluster.exited("n1", attempt, 3, std::nullopt, "exit 3");
  const store::Event& failed = only("job.failed");
  EXPECT_EQ(failed.severity, store::Severity::error);
  EXPECT_EQ(failed.details["exit_code"], 3);
  EXPECT_EQ(failed.details["node"], "n1");
  EXPECT_FALSE(failed.details["class"].get<std::string>().empty());
  EXPECT_FALSE(failed.details["suggestion"].get<std::string>().empty());
  EXPECT_EQ(failed.message.find('\n'), std::string::npos);
}

TEST_F(EventsTest, ARetryTellsWhyTheNextAttemptAndTheResumeStep) {
  const AttemptId attempt = run_on_n1(kTwoAttempts);
  cluster.exited("n1", attempt, 1, std::nullopt, "exit 1");
  const store::Event& retrying = only("job.retrying");
  EXPECT_EQ(retrying.severity, store::Severity::warning);
  EXPECT_EQ(retrying.details["next_attempt"], 2);
  EXPECT_EQ(retrying.details["resume_step"], 0);
  EXPECT_FALSE(retrying.details["why"].get<std::string>().empty());
  EXPECT_TRUE(of("job.failed").empty());
}

TEST_F(EventsTest, CancellingAPendingJobIsOneChangeWithItsAuditRecord) {
  const JobId id = submit_as(kAlice);
  ASSERT_EQ(call("POST", "/v1/jobs/" + std::to_string(id) + "/cancel", kAlice).status, 200);
  const store::Event& cancelled = only("job.cancelled");
  EXPECT_EQ(cancelled.user, "alice");
  const store::Event& audited = only("audit.job.cancelled");
  EXPECT_EQ(audited.seq, cancelled.seq + 1);
  EXPECT_EQ(audited.user, "alice");
}

TEST_F(EventsTest, DrainUndrainAndDownAreNodeEvents) {
  cluster.connect("n1");
  ASSERT_EQ(call("POST", "/v1/nodes/n1/drain", kAdmin).status, 200);
  const store::Event& drained = only("node.drained");
  EXPECT_EQ(drained.severity, store::Severity::warning);
  EXPECT_EQ(drained.node, "n1");
  EXPECT_FALSE(drained.job_id);
  EXPECT_EQ(only("audit.node.drained").seq, drained.seq + 1);
  EXPECT_EQ(only("audit.node.drained").user, "root");
  ASSERT_EQ(call("POST", "/v1/nodes/n1/undrain", kAdmin).status, 200);
  EXPECT_EQ(only("node.undrained").details["state"], "HEALTHY");
  cluster.advance(10min);  // no heartbeat
  cluster.jobs.tick();
  cluster.settle();
  EXPECT_EQ(only("node.down").severity, store::Severity::error);
  // What to do about it travels with it, to the events feed and every alert.
  const std::string suggestion = only("node.down").details.value("suggestion", "");
  EXPECT_NE(suggestion.find("agent stopped answering"), std::string::npos) << suggestion;
  EXPECT_FALSE(drained.details.contains("suggestion")) << "an operator's drain needs no advice";
}

TEST(NodeStateEvent, SaysWhatToDoAboutANodeThatNeedsAnOperator) {
  const store::Event unhealthy = node_state_event(TimePoint{}, "node.unhealthy", NodeState::unhealthy, "trn-3", "hbm: bad");
  const std::string suggestion = unhealthy.details.value("suggestion", "");
  EXPECT_NE(suggestion.find("'trainyard node trn-3'"), std::string::npos) << suggestion;
  EXPECT_NE(suggestion.find("'trainyard health run trn-3'"), std::string::npos) << suggestion;
  EXPECT_FALSE(node_state_event(TimePoint{}, "node.healthy", NodeState::healthy, "trn-3", "passed").details.contains("suggestion"));
}

TEST_F(EventsTest, AFailingCommitStoresNeitherTheChangeNorItsEvents) {
  cluster.connect("n1");
  const std::size_t before = all().size();
  cluster.store.fail_commits(true);
  EXPECT_EQ(call("POST", "/v1/jobs", kAlice, kOneAttempt).status, 503);
  cluster.store.fail_commits(false);
  EXPECT_EQ(all().size(), before);
  EXPECT_FALSE(cluster.memory.job(1));
}

TEST_F(EventsTest, UsersReadTheirOwnJobsAndTheClustersEventsAdminsReadAll) {
  cluster.connect("n1");
  const JobId alices = submit_as(kAlice);
  const JobId bobs = submit_as(kBob);
  auto ids = [](const Reply& r) {
    std::set<std::pair<std::string, JobId>> out;
    for (const Json& e : r.body["events"]) out.insert({e["type"], e.value("job", JobId{0})});
    return out;
  };
  const Reply bob = call("GET", "/v1/events", kBob);
  ASSERT_EQ(bob.status, 200) << bob.text;
  EXPECT_TRUE(ids(bob).contains({"job.submitted", bobs}));
  EXPECT_FALSE(ids(bob).contains({"job.submitted", alices}));
  EXPECT_TRUE(ids(bob).contains({"node.registered", 0}));
  EXPECT_FALSE(ids(bob).contains({"audit.job.submitted", bobs})) << "the audit log is the admin's";
  const Reply viewer = call("GET", "/v1/events", kViewer);
  EXPECT_TRUE(ids(viewer).contains({"job.submitted", alices}));
  EXPECT_FALSE(ids(viewer).contains({"audit.job.submitted", alices}));
  const Reply admin = call("GET", "/v1/events?type=audit.*", kAdmin);
  EXPECT_EQ(admin.body["events"].size(), 2u);
  EXPECT_EQ(admin.body["events"][0]["user"], "alice");
}

TEST_F(EventsTest, FiltersAndPagesOldestFirst) {
  cluster.connect("n1");
  submit_as(kAlice);
  submit_as(kAlice);
  const Reply first = call("GET", "/v1/events?type=job.*&limit=1", kAlice);
  ASSERT_EQ(first.body["events"].size(), 1u);
  EXPECT_EQ(first.body["events"][0]["job"], 1);
  const std::string next = first.body["next"];
  const Reply second = call("GET", "/v1/events?type=job.*&limit=10&cursor=" + next, kAlice);
  ASSERT_EQ(second.body["events"].size(), 1u);
  EXPECT_EQ(second.body["events"][0]["job"], 2);
  EXPECT_TRUE(second.body["next"].is_null());
  EXPECT_EQ(call("GET", "/v1/events?job=2", kAlice).body["events"].size(), 1u);
  EXPECT_EQ(call("GET", "/v1/events?node=n1&type=node.*", kAlice).body["events"].size(), 1u);
}

TEST_F(EventsTest, NewestFirstPagesBackAndSinceEndsTheWalk) {
  cluster.connect("n1");
  submit_as(kAlice);
  cluster.clock.advance(std::chrono::minutes(20));
  submit_as(kAlice);
  submit_as(kAlice);
  auto jobs_of = [](const Reply& r) {
    std::vector<JobId> out;
    for (const Json& e : r.body["events"]) out.push_back(e["job"]);
    return out;
  };
  const Reply first = call("GET", "/v1/events?order=newest&type=job.*&limit=2", kAlice);
  ASSERT_EQ(first.status, 200) << first.text;
  EXPECT_EQ(jobs_of(first), (std::vector<JobId>{3, 2}));
  const Reply second = call("GET", "/v1/events?order=newest&type=job.*&limit=2&cursor=" + first.body["next"].get<std::string>(), kAlice);
  EXPECT_EQ(jobs_of(second), (std::vector<JobId>{1}));
  EXPECT_TRUE(second.body["next"].is_null());
  const Reply recent = call("GET", "/v1/events?order=newest&type=job.*&since=10m", kAlice);
  EXPECT_EQ(jobs_of(recent), (std::vector<JobId>{3, 2})) << "job 1 was submitted 20 minutes ago";
  EXPECT_TRUE(recent.body["next"].is_null());
  EXPECT_EQ(jobs_of(call("GET", "/v1/events?type=job.*&since=10m", kAlice)), (std::vector<JobId>{2, 3}));
  const std::int64_t newest = first.body["events"][0]["id"];
  EXPECT_EQ(jobs_of(call("GET", "/v1/events?order=newest&type=job.*&before=" + std::to_string(newest), kAlice)),
            (std::vector<JobId>{2, 1}));
}

TEST_F(EventsTest, AuditEventsAreOffTheDefaultFeedAndATypeNamingThemBringsThemIn) {
  cluster.connect("n1");
  submit_as(kAlice);
  auto types = [](const Reply& r) {
    std::set<std::string> out;
    for (const Json& e : r.body["events"]) out.insert(e["type"]);
    return out;
  };
  for (const char* order : {"oldest", "newest"}) {
    const Reply feed = call("GET", std::string("/v1/events?order=") + order, kAdmin);
    EXPECT_TRUE(types(feed).contains("job.submitted")) << order;
    EXPECT_FALSE(types(feed).contains("audit.job.submitted")) << order;
  }
  EXPECT_TRUE(types(call("GET", "/v1/events?type=audit.*", kAdmin)).contains("audit.job.submitted"));
  EXPECT_TRUE(types(call("GET", "/v1/events?type=*", kAdmin)).contains("audit.job.submitted")) << "a glob over every type";
}

TEST_F(EventsTest, BadFiltersAre400sNamingTheField) {
  EXPECT_EQ(call("GET", "/v1/events?type=jbo.*", kAlice).error_field(), "type");
  EXPECT_EQ(call("GET", "/v1/events?type=JOB.FAILED", kAlice).error_field(), "type");
  EXPECT_EQ(call("GET", "/v1/events?node=" + std::string(200, 'n'), kAlice).error_field(), "node");
  EXPECT_EQ(call("GET", "/v1/events?job=x", kAlice).error_field(), "job");
  EXPECT_EQ(call("GET", "/v1/events?limit=0", kAlice).error_field(), "limit");
  EXPECT_EQ(call("GET", "/v1/events?limit=1001", kAlice).status, 400);
  EXPECT_EQ(call("GET", "/v1/events?since=yesterday", kAlice).error_field(), "since");
  EXPECT_EQ(call("GET", "/v1/events?order=sideways", kAlice).error_field(), "order");
  EXPECT_EQ(call("GET", "/v1/events?order=newest&after=3", kAlice).error_field(), "after");
  EXPECT_EQ(call("GET", "/v1/events?before=3", kAlice).error_field(), "before");
  EXPECT_EQ(call("GET", "/v1/events?order=newest&before=0", kAlice).error_field(), "before");
}

TEST(EventSeverity, OneTableCoversEveryType) {
  EXPECT_EQ(event_types().size(), 27u);
  EXPECT_EQ(severity_of("job.failed"), store::Severity::error);
  EXPECT_EQ(severity_of("node.suspect"), store::Severity::warning);
  EXPECT_EQ(severity_of("job.straggler"), store::Severity::warning);
  EXPECT_EQ(severity_of("job.checkpoint_failed"), store::Severity::warning);
  EXPECT_EQ(severity_of("job.succeeded"), store::Severity::info);
  EXPECT_EQ(severity_of("audit.token.created"), store::Severity::info);
  EXPECT_TRUE(is_event_type("audit.share.changed"));
  EXPECT_FALSE(is_event_type("job.state"));
}

}  // namespace
}  // namespace trainyard::daemon::testing
