// The REST API on jobs: submit, read, list, page, cancel, goodput and metrics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

TEST_F(ApiTest, SubmitAnswers201OnlyOnceCommitted) {
  std::optional<bool> committed_at_answer;
  on_answer = [&] { committed_at_answer = cluster.store.committed_job(1); };
  auto reply = send("POST", "/v1/jobs", kAlice, kJobBody);
  EXPECT_EQ(reply->answers, 0) << "answered before the commit completed";
  cluster.settle();
  ASSERT_EQ(reply->answers, 1);
  EXPECT_EQ(committed_at_answer, true) << "201 before the job was durable";
  EXPECT_EQ(reply->status, 201);
  EXPECT_EQ(reply->body["id"], 1);
  EXPECT_EQ(reply->body["user"], "alice") << "the user comes from the token";
  EXPECT_EQ(reply->body["state"], "PENDING");
  EXPECT_EQ(reply->header("Location"), "/v1/jobs/1");
}

TEST_F(ApiTest, SubmitAnswersTheStoredRecordWithItsPlaceInTheQueue) {
  const Reply r = call("POST", "/v1/jobs", kAlice, kJobBody);
  ASSERT_EQ(r.status, 201) << r.body.dump();
  EXPECT_EQ(r.body["queue_position"], 1) << r.body.dump();
  Json record = r.body;
  record.erase("queue_position");
  record.erase("pending_reason");
  const auto stored = cluster.stored_job(1);
  ASSERT_TRUE(stored);
  EXPECT_EQ(record, to_json(*stored));
}

TEST_F(ApiTest, AJobThatCouldNeverStartIs400NamingTheFieldAndIsNotKept) {
  cluster.connect("n1", 8);
  Reply r = call("POST", "/v1/jobs", kAlice, R"({"name":"wide","nodes":2,"command":{"argv":["/bin/true"]}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error_code(), "invalid_field");
  EXPECT_EQ(r.error_field(), "nodes");
  EXPECT_THAT(r.error_message(), HasSubstr("2 nodes asked, and 1 node is registered"));
  r = call("POST", "/v1/jobs", kAlice, R"({"name":"fat","cores_per_node":16,"command":{"argv":["/bin/true"]}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error_field(), "cores_per_node");
  EXPECT_TRUE(call("GET", "/v1/jobs", kAlice).body["jobs"].empty());
  r = call("POST", "/v1/jobs", kAlice,
           R"({"name":"later","nodes":2,"wait_for_capacity":true,"command":{"argv":["/bin/true"]}})");
  EXPECT_EQ(r.status, 201) << r.body.dump();
  EXPECT_EQ(r.body["spec"]["wait_for_capacity"], true);
}

TEST_F(ApiTest, SubmitWithAFailingStoreIs503AndNothingIsKept) {
  cluster.connect("n1");
  cluster.store.fail_commits(true);
  const Reply r = call("POST", "/v1/jobs", kAlice, kJobBody);
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.error_code(), "unavailable");
  cluster.store.fail_commits(false);
  EXPECT_EQ(call("GET", "/v1/jobs/1", kAlice).status, 404);
  EXPECT_TRUE(call("GET", "/v1/jobs", kAlice).body["jobs"].empty());
  EXPECT_TRUE(cluster.launches().empty());
}

TEST_F(ApiTest, BadBodiesAre400NamingTheField) {
  struct Case {
    std::string body;
    std::string code;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"{\"name\":", "invalid_json", ""},
      {"[]", "invalid_json", ""},
      {R"({"name":"t","command":{"argv":["a"]},"bogus":1})", "invalid_field", "bogus"},
      {R"({"name":"t","nodes":"two","command":{"argv":["a"]}})", "invalid_field", "nodes"},
      {R"({"name":"t","nodes":0,"command":{"argv":["a"]}})", "invalid_field", "nodes"},
      {R"({"name":"t","command":{"argv":["a"]},"retry":{"attempts":11}})", "invalid_field", "retry.attempts"},
      {R"({"command":{"argv":["a"]}})", "invalid_field", "name"},
  };
  for (const auto& c : cases) {
    const Reply r = call("POST", "/v1/jobs", kAlice, c.body);
    EXPECT_EQ(r.status, 400) << c.body;
    EXPECT_EQ(r.error_code(), c.code) << c.body << " -> " << r.body.dump();
    EXPECT_EQ(r.error_field(), c.field) << c.body;
  }
  EXPECT_FALSE(cluster.stored_job(1));
}

// The body with the job's id taken out, so replies about two ids compare.

std::string body_without_id(const Reply& r, JobId id) {
  std::string text = r.body.dump();
  const std::string digits = std::to_string(id);
  for (auto at = text.find(digits); at != std::string::npos; at = text.find(digits, at)) text.replace(at, digits.size(), "N");
  return std::to_string(r.status) + " " + text;
}

TEST_F(ApiTest, AnotherUsersJobAnswersAsAMissingOne) {
  const JobId id = submit_as(kAlice);
  const JobId missing = id + 1000;
  const std::string job = "/v1/jobs/" + std::to_string(id);
  const std::string none = "/v1/jobs/" + std::to_string(missing);
  for (const auto& [method, suffix] : std::vector<std::pair<std::string, std::string>>{
           {"GET", ""}, {"POST", "/cancel"}, {"GET", "/attempts"}, {"GET", "/logs"}, {"GET", "/checkpoints"},
           {"GET", "/metrics"}}) {
    const Reply other = call(method, job + suffix, kBob);
    EXPECT_EQ(other.status, 404) << method << " " << suffix;
    EXPECT_EQ(body_without_id(other, id), body_without_id(call(method, none + suffix, kBob), missing))
        << method << " " << suffix;
  }
  EXPECT_EQ(cluster.jobs.active_job(id)->state, JobState::pending) << "bob's cancel had an effect";
  EXPECT_EQ(call("GET", job, kAlice).status, 200);
  EXPECT_EQ(call("GET", job, kAdmin).status, 200);
}

// A dependency names a job by id: on another user's job it is refused as one on no job is, so that
// bob learns nothing of alice's jobs (whether they exist, how they ended, how many tasks an array has).
TEST_F(ApiTest, ADependencyOnAnotherUsersJobIsRefusedAsOneOnAMissingJob) {
  for (int i = 0; i < 10; ++i) submit_as(kAlice);  // ids of two digits, which no other text of the answers holds
  const JobId pending = submit_as(kAlice);
  const JobId ended = submit_as(kAlice);
  ASSERT_EQ(call("POST", "/v1/jobs/" + std::to_string(ended) + "/cancel", kAlice).status, 200);
  ASSERT_FALSE(cluster.jobs.active_job(ended)) << "an ended job's owner is read from the store";
  const Reply array = call("POST", "/v1/jobs", kAlice,
                           R"({"name":"sweep","nodes":1,"wait_for_capacity":true,"array":"0-2","command":{"argv":["/bin/true"]}})");
  ASSERT_EQ(array.status, 201) << array.body.dump();
  const JobId array_id = array.body["id"];
  const auto depending_on = [](JobId id) {
    return R"({"name":"after","nodes":1,"wait_for_capacity":true,"command":{"argv":["/bin/true"]},"depends_on":[{"job":)" +
           std::to_string(id) + "}]}";
  };
  const JobId missing = 90;
  const Reply none = call("POST", "/v1/jobs", kBob, depending_on(missing));
  ASSERT_EQ(none.status, 400) << none.body.dump();
  EXPECT_EQ(none.error_field(), "depends_on[0].job");
  for (const JobId alices : {pending, ended, array_id, array_id + 1}) {
    EXPECT_EQ(body_without_id(call("POST", "/v1/jobs", kBob, depending_on(alices)), alices), body_without_id(none, missing))
        << "bob's dependency on alice's job " << alices;
    EXPECT_EQ(call("POST", "/v1/jobs", kAlice, depending_on(alices)).status, 201) << "alice's own job " << alices;
    EXPECT_EQ(call("POST", "/v1/jobs", kAdmin, depending_on(alices)).status, 201) << "an admin sees every job";
  }
}

TEST_F(ApiTest, BadIdsAndQueryParametersAre400NamingTheField) {
  submit_as(kAlice);
  struct Case {
    std::string target;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"/v1/jobs/abc", "id"},
      {"/v1/jobs/0", "id"},
      {"/v1/jobs/-1", "id"},
      {"/v1/jobs/1x", "id"},
      {"/v1/jobs/99999999999999999999", "id"},
      {"/v1/jobs?limit=0", "limit"},
      {"/v1/jobs?limit=abc", "limit"},
      {"/v1/jobs?limit=1001", "limit"},
      {"/v1/jobs?before=0", "before"},
      {"/v1/jobs?state=sleeping", "state"},
      {"/v1/jobs?state=FAILED,DONE", "state"},
      {"/v1/jobs?since=yesterday", "since"},
      {"/v1/jobs?until=2h%20ago", "until"},
      {"/v1/jobs?after=-1", "after"},
      {"/v1/jobs?colour=red", "colour"},
      {"/v1/jobs/1/logs?tail=0", "tail"},
      {"/v1/jobs/1/logs?rank=-1", "rank"},
      {"/v1/jobs/1/logs?verbose=1", "verbose"},
      {"/v1/goodput?window=24", "window"},
      {"/v1/goodput?window=31d", "window"},
      {"/v1/goodput?window=0h", "window"},
  };
  for (const auto& c : cases) {
    const Reply r = call("GET", c.target, kAlice);
    EXPECT_EQ(r.status, 400) << c.target << " -> " << r.body.dump();
    EXPECT_EQ(r.error_field(), c.field) << c.target;
    EXPECT_THAT(r.error_message(), HasSubstr(c.field)) << c.target;
  }
}

TEST_F(ApiTest, UsersListOnlyTheirOwnJobs) {
  submit_as(kAlice);
  submit_as(kBob);
  submit_as(kAlice);
  Reply r = call("GET", "/v1/jobs", kAlice);
  ASSERT_EQ(r.status, 200);
  ASSERT_EQ(r.body["jobs"].size(), 2u);
  for (const auto& job : r.body["jobs"]) EXPECT_EQ(job["user"], "alice");
  EXPECT_EQ(r.body["jobs"][0]["id"], 3) << "newest first";
  r = call("GET", "/v1/jobs?user=bob", kAlice);
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.error_field(), "user");
  EXPECT_EQ(call("GET", "/v1/jobs", kBob).body["jobs"].size(), 1u);
  EXPECT_EQ(call("GET", "/v1/jobs", kAdmin).body["jobs"].size(), 3u);
  EXPECT_EQ(call("GET", "/v1/jobs?user=bob", kAdmin).body["jobs"].size(), 1u);
}

TEST_F(ApiTest, PagesWithLimitAndCursorAndBoundsByBefore) {
  for (int i = 0; i < 3; ++i) submit_as(kAlice);
  Reply r = call("GET", "/v1/jobs?limit=2", kAlice);
  ASSERT_EQ(r.body["jobs"].size(), 2u);
  ASSERT_TRUE(r.body["next"].is_string());
  r = call("GET", "/v1/jobs?limit=2&cursor=" + r.body["next"].get<std::string>(), kAlice);
  ASSERT_EQ(r.body["jobs"].size(), 1u);
  EXPECT_EQ(r.body["jobs"][0]["id"], 1);
  EXPECT_TRUE(r.body["next"].is_null());
  r = call("GET", "/v1/jobs?limit=2&before=3", kAlice);
  ASSERT_EQ(r.body["jobs"].size(), 2u);
  EXPECT_TRUE(r.body["next"].is_null()) << "a full page that is the last has no next";
}

TEST_F(ApiTest, CancelPendingJobThenConflict) {
  const JobId id = submit_as(kAlice);
  Reply r = call("POST", "/v1/jobs/" + std::to_string(id) + "/cancel", kAlice);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body["state"], "CANCELLED");
  r = call("POST", "/v1/jobs/" + std::to_string(id) + "/cancel", kAlice);
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(call("GET", "/v1/jobs/" + std::to_string(id), kAlice).body["state"], "CANCELLED");
}

TEST_F(ApiTest, JobAndAttemptsReflectTheRunningAttempt) {
  cluster.connect("n1");
  const JobId id = submit_as(kAlice);
  const auto launches = cluster.agents["n1"]->launches();
  ASSERT_EQ(launches.size(), 1u);
  cluster.started("n1", launches[0].attempt_id);
  EXPECT_EQ(call("GET", "/v1/jobs/" + std::to_string(id), kAlice).body["state"], "RUNNING");
  const Reply r = call("GET", "/v1/jobs/" + std::to_string(id) + "/attempts", kAlice);
  ASSERT_EQ(r.status, 200);
  ASSERT_EQ(r.body["attempts"].size(), 1u);
  EXPECT_EQ(r.body["attempts"][0]["id"], launches[0].attempt_id);
  const Reply nodes = call("GET", "/v1/nodes", kAlice);
  ASSERT_EQ(nodes.body["nodes"].size(), 1u);
  EXPECT_EQ(nodes.body["nodes"][0]["free_cores"], 0);
}

TEST_F(ApiTest, GoodputOverAWindowCountsEveryAttemptThatRanInItAndOnlyThat) {
  const TimePoint now = cluster.clock.system_now();
  const auto job = [](JobId id, const std::string& user) {
    Job j;
    j.id = id;
    j.user = user;
    j.state = JobState::running;
    j.spec.name = "train-" + std::to_string(id);
    return j;
  };
  // Never launched: all of an attempt's time is pre-flight, so allocated time is easy to tell.
  const auto ran = [&](AttemptId id, JobId of, std::chrono::hours from, std::optional<std::chrono::hours> to) {
    Attempt a;
    a.id = id;
    a.job_id = of;
    a.number = static_cast<int>(id);
    a.state = to ? AttemptState::failed : AttemptState::starting;
    a.nodes = {"n1"};
    a.cores_per_node = 4;
    a.created_at = now - from;
    if (to) a.ended_at = now - *to;
    return a;
  };
  using std::chrono::hours;
  cluster.store.commit(std::vector<store::Change>{store::Change{
      .jobs = {job(1, "alice"), job(2, "bob"), job(3, "alice")},
      .attempts = {ran(1, 1, hours(72), hours(30)), ran(2, 1, hours(30), hours(12)), ran(3, 2, hours(2), std::nullopt),
                   ran(4, 3, hours(40), hours(25))}}});
  const Reply all = call("GET", "/v1/goodput?window=24h", kAdmin);
  ASSERT_EQ(all.status, 200) << all.body.dump();
  EXPECT_EQ(all.body["window"]["from"], format_time(now - hours(24)));
  EXPECT_DOUBLE_EQ(all.body["cluster"]["allocated_core_s"].get<double>(), (12 + 2) * 3600.0 * 4);
  ASSERT_EQ(all.body["jobs"].size(), 2u);
  EXPECT_EQ(all.body["jobs"][0]["job_id"], 2);
  EXPECT_DOUBLE_EQ(all.body["jobs"][1]["allocated_core_s"].get<double>(), 12 * 3600.0 * 4);
  const Reply alices = call("GET", "/v1/goodput?window=1d", kAlice);
  EXPECT_DOUBLE_EQ(alices.body["cluster"]["allocated_core_s"].get<double>(), 12 * 3600.0 * 4);
  EXPECT_EQ(alices.body["jobs"].size(), 1u);
}

TEST_F(ApiTest, MetricsFromRankZeroAreStoredAndDownsampled) {
  cluster.connect("n1");
  cluster.connect("n2");
  const Reply submitted = call("POST", "/v1/jobs", kAlice, R"({"name":"train","nodes":2,"command":{"argv":["/bin/true"]}})");
  ASSERT_EQ(submitted.status, 201);
  const std::string path = "/v1/jobs/" + submitted.body["id"].dump() + "/metrics";
  const auto launches = cluster.launches();
  ASSERT_EQ(launches.size(), 2u);
  std::string rank0, rank1;
  AttemptId attempt = 0;
  for (const auto& [node, list] : launches) {
    (list[0].rank == 0 ? rank0 : rank1) = node;
    attempt = list[0].attempt_id;
  }
  cluster.started(rank0, attempt);
  cluster.started(rank1, attempt);
  EXPECT_EQ(call("GET", path, kAlice).body["points"].size(), 0u);

  MetricsMsg msg{attempt, {}};
  for (int step = 1; step <= 10; ++step) {
    msg.steps.push_back(StepMetric{step, 10.0 - step, 1.0, 5.0, 1e-3, 100.0, step == 4, std::nullopt});
  }
  msg.steps[5].spike_steps_to_return = 2;  // step 6 ends the spike of step 4
  cluster.send(rank0, msg);
  // Another rank's copy of the numbers is fenced off: rank 0 speaks for the job.
  cluster.send(rank1, MetricsMsg{attempt, {StepMetric{11, 99.0, 1, 1, 1, 1, false, std::nullopt}}});

  Reply r = call("GET", path + "?max_points=5", kAlice);
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["steps"], 10);
  EXPECT_EQ(r.body["bucket_steps"], 2);
  ASSERT_EQ(r.body["points"].size(), 5u);
  EXPECT_EQ(r.body["points"][0]["first_step"], 1);
  EXPECT_EQ(r.body["points"][0]["step"], 2);
  EXPECT_DOUBLE_EQ(r.body["points"][0]["loss"].get<double>(), 8.5);
  EXPECT_DOUBLE_EQ(r.body["points"][4]["loss_min"].get<double>(), 0.0);
  EXPECT_EQ(r.body["points"][1]["spikes"], 1);
  ASSERT_EQ(r.body["spikes"].size(), 1u);
  EXPECT_EQ(r.body["spikes"][0]["started_at_step"], 4);
  EXPECT_EQ(r.body["spikes"][0]["steps_to_return"], 2);

  EXPECT_EQ(call("GET", path, kAlice).body["points"].size(), 10u) << "default max_points keeps short runs whole";
  EXPECT_EQ(call("GET", path, kBob).status, 404);
  r = call("GET", path + "?max_points=0", kAlice);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error_field(), "max_points");
  EXPECT_EQ(call("GET", path + "?points=3", kAlice).error_field(), "points");
}

}  // namespace
}  // namespace trainyard::daemon::testing

namespace trainyard::daemon::testing {
namespace {

// A job's secret-looking environment values are masked in every job answer for everyone but the
// job's owner, as provenance masks them; other variables stay readable.
TEST_F(ApiTest, SecretEnvironmentValuesAreMaskedForEveryoneButTheOwner) {
  const Reply submitted = call("POST", "/v1/jobs", kAlice,
                               R"({"name":"train","nodes":1,"wait_for_capacity":true,
                                   "command":{"argv":["/bin/true"],
                                   "env":{"AWS_SECRET_ACCESS_KEY":"alice-super-secret-123","EPOCHS":"3"}}})");
  ASSERT_EQ(submitted.status, 201) << submitted.body.dump();
  const std::string id = std::to_string(submitted.body["id"].get<JobId>());
  for (const char* token : {kViewer, kOperator, kAdmin}) {
    const Reply one = call("GET", "/v1/jobs/" + id, token);
    ASSERT_EQ(one.status, 200) << token;
    EXPECT_EQ(one.body["spec"]["command"]["env"]["AWS_SECRET_ACCESS_KEY"], "<masked>") << token;
    EXPECT_EQ(one.body["spec"]["command"]["env"]["EPOCHS"], "3") << token;
    const Reply list = call("GET", "/v1/jobs", token);
    ASSERT_EQ(list.status, 200) << token;
    EXPECT_EQ(list.text.find("alice-super-secret-123"), std::string::npos) << token << ": " << list.text;
    const Reply queue = call("GET", "/v1/queue", token);
    EXPECT_EQ(queue.text.find("alice-super-secret-123"), std::string::npos) << token << ": " << queue.text;
  }
  const Reply own = call("GET", "/v1/jobs/" + id, kAlice);
  EXPECT_EQ(own.body["spec"]["command"]["env"]["AWS_SECRET_ACCESS_KEY"], "alice-super-secret-123");
  const Reply held = call("POST", "/v1/jobs/" + id + "/hold", kAdmin);
  ASSERT_EQ(held.status, 200) << held.body.dump();
  EXPECT_EQ(held.text.find("alice-super-secret-123"), std::string::npos) << held.text;
}

}  // namespace
}  // namespace trainyard::daemon::testing
