// The REST API as a pure handler: requests are values, the response is captured, and the job
// manager behind it runs on fake agents and fake time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

TEST_F(ApiTest, AUserOverTheRateLimitGets429WithRetryAfterAndAnAdminDoesNot) {
  UserLimits limits;
  limits.rate = {1, 2, false};
  Api limited(cluster.jobs, cluster.worker, cluster.files, tokens, cluster.clock, cluster.timers, "test-version", "", limits);
  under_test = &limited;
  EXPECT_EQ(call("GET", "/v1/jobs", kAlice).status, 200);
  EXPECT_EQ(call("GET", "/v1/jobs", kAlice).status, 200);
  Reply r = call("GET", "/v1/jobs", kAlice);
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.error_code(), "rate_limited");
  EXPECT_THAT(r.error_message(), HasSubstr("1 requests/s per user with bursts of 2 (--rate-limit-rps"));
  EXPECT_EQ(r.header("Retry-After"), "1");
  EXPECT_EQ(call("POST", "/v1/jobs", kAlice, kJobBody).status, 429) << "a refused request does nothing";
  EXPECT_FALSE(cluster.stored_job(1));
  EXPECT_EQ(call("GET", "/v1/jobs", kBob).status, 200) << "alice's bucket is hers alone";
  for (int i = 0; i < 10; ++i) EXPECT_EQ(call("GET", "/v1/jobs", kAdmin).status, 200) << "admins are exempt";
  cluster.advance(Millis(1000));
  EXPECT_EQ(call("GET", "/v1/jobs", kAlice).status, 200) << "a token came back after Retry-After";
}

TEST_F(ApiTest, AUserOverThePendingCapGets429NamingItAndAnAdminDoesNot) {
  UserLimits limits;
  limits.max_pending_per_user = 2;
  Api limited(cluster.jobs, cluster.worker, cluster.files, tokens, cluster.clock, cluster.timers, "test-version", "", limits);
  under_test = &limited;
  const JobId first = submit_as(kAlice);
  submit_as(kAlice);
  Reply r = call("POST", "/v1/jobs", kAlice, kJobBody);
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.error_code(), "too_many_pending");
  EXPECT_THAT(r.error_message(), HasSubstr("--max-pending-per-user 2"));
  EXPECT_FALSE(cluster.stored_job(3)) << "the refused job was kept";
  submit_as(kBob);
  for (int i = 0; i < 3; ++i) submit_as(kAdmin);
  EXPECT_EQ(call("POST", "/v1/jobs/" + std::to_string(first) + "/cancel", kAlice).status, 200);
  submit_as(kAlice);
}

TEST_F(ApiTest, HealthzNeedsNoToken) {
  const Reply r = call("GET", "/healthz", "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body["version"], "test-version");
}

TEST_F(ApiTest, MissingOrWrongTokenIs401) {
  Reply r = call("GET", "/v1/jobs", "");
  EXPECT_EQ(r.status, 401);
  EXPECT_THAT(r.error_message(), HasSubstr("missing bearer token"));
  r = call("GET", "/v1/jobs", "not-a-token");
  EXPECT_EQ(r.status, 401);
  EXPECT_THAT(r.error_message(), HasSubstr("not valid"));
  EXPECT_EQ(call("GET", "/v1/jobs", kJoin).status, 401) << "the agents' join token is not an API token";
  EXPECT_EQ(call("POST", "/v1/jobs", "", kJobBody).status, 401);
  EXPECT_FALSE(cluster.stored_job(1)) << "an unauthenticated submission was stored";
}

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
std::string without_id(const Reply& r, JobId id) {
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
    EXPECT_EQ(without_id(other, id), without_id(call(method, none + suffix, kBob), missing)) << method << " " << suffix;
  }
  EXPECT_EQ(cluster.jobs.active_job(id)->state, JobState::pending) << "bob's cancel had an effect";
  EXPECT_EQ(call("GET", job, kAlice).status, 200);
  EXPECT_EQ(call("GET", job, kAdmin).status, 200);
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

TEST_F(ApiTest, UnknownPathIs404) {
  for (const std::string target : {"/", "/v2/jobs", "/v1", "/v1/nope", "/v1/jobs/1/nope", "/v1/jobs/1/cancel/now"}) {
    const Reply r = call("GET", target, kAdmin);
    EXPECT_EQ(r.status, 404) << target;
    EXPECT_EQ(r.error_code(), "not_found") << target;
  }
  EXPECT_EQ(call("GET", "/v1/jobs/12345", kAdmin).status, 404) << "a job that does not exist";
  EXPECT_EQ(call("GET", "/v1/nodes/ghost", kAdmin).status, 404);
}

TEST_F(ApiTest, WrongMethodIs405WithAllow) {
  struct Case {
    std::string method;
    std::string target;
    std::string allow;
  };
  const std::vector<Case> cases = {
      {"DELETE", "/v1/jobs", "GET, POST"},
      {"PUT", "/v1/jobs/1", "GET, PATCH"},
      {"GET", "/v1/jobs/1/cancel", "POST"},
      {"POST", "/v1/jobs/1/attempts", "GET"},
      {"POST", "/v1/nodes", "GET"},
      {"PUT", "/v1/tokens", "GET, POST"},
      {"GET", "/v1/tokens/join/rotate", "POST"},
      {"GET", "/v1/tokens/tok_1", "DELETE"},
      {"POST", "/healthz", "GET"},
      {"GET", "/v1/shares/default", "PUT"},
  };
  for (const auto& c : cases) {
    const Reply r = call(c.method, c.target, kAdmin);
    EXPECT_EQ(r.status, 405) << c.method << " " << c.target;
    EXPECT_EQ(r.header("Allow"), c.allow) << c.method << " " << c.target;
  }
}

TEST_F(ApiTest, OnlyAdminsCreateTokensAndTheNewTokenWorks) {
  Reply r = call("POST", "/v1/tokens", kAlice, R"({"user":"carol"})");
  EXPECT_EQ(r.status, 403);
  r = call("POST", "/v1/tokens", kAdmin, R"({"user":"carol","role":"agent"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error_field(), "role");
  r = call("POST", "/v1/tokens", kAdmin, R"({"user":"carol","expires":1})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error_field(), "expires");
  r = call("POST", "/v1/tokens", kAdmin, R"({"user":"bad name!"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error_field(), "user");

  r = call("POST", "/v1/tokens", kAdmin, R"({"user":"carol"})");
  ASSERT_EQ(r.status, 201) << r.body.dump();
  EXPECT_EQ(r.body["role"], "user");
  const std::string secret = r.body.value("token", "");
  ASSERT_FALSE(secret.empty());
  const Reply carol = call("GET", "/v1/jobs", secret);
  EXPECT_EQ(carol.status, 200);
  const JobId id = submit_as(secret);
  EXPECT_EQ(call("GET", "/v1/jobs/" + std::to_string(id), secret).body["user"], "carol");
  EXPECT_EQ(call("POST", "/v1/tokens", secret, R"({"user":"dave"})").status, 403) << "a user token made by an admin is no admin";
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

TEST_F(ApiTest, UsersSeeNeitherDataAddressesNorOtherUsersAttemptsOnNodes) {
  cluster.connect("n1");
  cluster.connect("n2");
  const Reply submitted = call("POST", "/v1/jobs", kAlice, R"({"name":"train","nodes":2,"command":{"argv":["/bin/true"]}})");
  ASSERT_EQ(submitted.status, 201);
  const AttemptId attempt = cluster.agents["n1"]->launches().at(0).attempt_id;
  for (const std::string target : {"/v1/nodes/n1", "/v1/nodes"}) {
    const Reply admin = call("GET", target, kAdmin);
    const Json& admin_n1 = target == "/v1/nodes" ? admin.body["nodes"][0] : admin.body;
    EXPECT_EQ(admin_n1["data_addr"], cluster.data_addr["n1"]) << target;
    EXPECT_EQ(admin_n1["attempts"], Json::array({attempt})) << target;

    const Reply bob = call("GET", target, kBob);
    const Json& bob_n1 = target == "/v1/nodes" ? bob.body["nodes"][0] : bob.body;
    EXPECT_FALSE(bob_n1.contains("data_addr")) << target << ": " << bob_n1.dump();
    EXPECT_EQ(bob_n1["attempts"], Json::array()) << target;
    EXPECT_EQ(bob_n1["other_attempts"], 1) << target;

    const Reply alice = call("GET", target, kAlice);
    const Json& alice_n1 = target == "/v1/nodes" ? alice.body["nodes"][0] : alice.body;
    EXPECT_FALSE(alice_n1.contains("data_addr")) << target;
    EXPECT_EQ(alice_n1["attempts"], Json::array({attempt})) << target;
    EXPECT_EQ(alice_n1["other_attempts"], 0) << target;
  }
}

TEST_F(ApiTest, SharesAreCreatedByAdminsAndSystemIsTheDaemonsOwn) {
  auto submit_to = [&](const std::string& token, const std::string& share) {
    return call("POST", "/v1/jobs", token, R"({"name":"t","share":")" + share +
                                           R"(","wait_for_capacity":true,"command":{"argv":["/bin/true"]}})");
  };
  for (const char* token : {kAlice, kAdmin}) {
    const Reply r = submit_to(token, "system");
    EXPECT_EQ(r.status, 403) << r.body.dump();
    EXPECT_EQ(r.error_field(), "share");
  }
  Reply r = submit_to(kAlice, "mine");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error_field(), "share");
  EXPECT_THAT(r.error_message(), HasSubstr("share mine does not exist; an admin creates it with PUT /v1/shares/mine"));
  EXPECT_EQ(submit_to(kAdmin, "mine").status, 400) << "admins too submit only to shares that exist";
  r = submit_to(kBob, "default");
  EXPECT_EQ(r.status, 201) << "the default share is open to every user";
  EXPECT_EQ(r.body["id"], 1) << "a refused submit took a job id";

  EXPECT_EQ(call("PUT", "/v1/shares/team", kAlice, R"({"weight":2,"members":["alice"]})").status, 403);
  r = call("PUT", "/v1/shares/team", kAdmin, R"({"weight":2,"members":["alice"]})");
  EXPECT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["members"], Json::array({"alice"}));
  EXPECT_EQ(submit_to(kAlice, "team").status, 201);
  r = submit_to(kBob, "team");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.error_field(), "share");
  EXPECT_THAT(r.error_message(), HasSubstr("bob is not a member of share team"));
  EXPECT_EQ(submit_to(kAdmin, "team").status, 201) << "admins may use any share but system";
  ASSERT_EQ(call("PUT", "/v1/shares/open", kAdmin, R"({"weight":1})").status, 200);
  EXPECT_EQ(submit_to(kBob, "open").status, 201);

  r = call("PUT", "/v1/shares/system", kAdmin, R"({"weight":1000})");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.error_field(), "name");
  EXPECT_EQ(call("PUT", "/v1/shares/default", kAdmin, R"({"weight":1,"members":["alice"]})").error_field(), "members");
  r = call("PUT", "/v1/shares/team", kAdmin, R"({"weight":1,"members":["a\u001b[2J"]})");
  EXPECT_EQ(r.error_field(), "members[0]") << r.body.dump();
  EXPECT_EQ(call("POST", "/v1/tokens", kAdmin, R"({"user":"system"})").error_field(), "user");

  auto members_of = [&](const Reply& list, const std::string& name) {
    for (const Json& row : list.body["shares"]) {
      if (row["name"] == name) return row.contains("members") ? row["members"] : Json("<absent>");
    }
    return Json("<no such row>");
  };
  const Reply admin_list = call("GET", "/v1/shares", kAdmin);
  EXPECT_EQ(members_of(admin_list, "team"), Json::array({"alice"}));
  EXPECT_EQ(members_of(admin_list, "open"), Json(nullptr));
  EXPECT_EQ(members_of(call("GET", "/v1/shares", kAlice), "team"), Json("<absent>"));
}

TEST_F(ApiTest, AnAdminSetsAShareStorageQuotaAndEveryoneSeesItsBytes) {
  Reply r = call("PUT", "/v1/shares/team", kAdmin, R"({"weight":2,"storage_limit_mb":0})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error_field(), "storage_limit_mb");
  r = call("PUT", "/v1/shares/team", kAdmin, R"({"weight":2,"storage_limit_mb":2048})");
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["storage_limit_mb"], 2048);
  // The reply is held: a range-for over a member of the temporary would read it after it is gone.
  const Reply listed = call("GET", "/v1/shares", kAlice);
  bool seen = false;
  for (const Json& row : listed.body["shares"]) {
    if (row["name"] != "team") continue;
    seen = true;
    EXPECT_EQ(row["storage_limit_mb"], 2048) << row.dump();
    EXPECT_EQ(row["storage_checkpoint_bytes"], 0) << row.dump();
    EXPECT_EQ(row["storage_log_bytes"], 0) << row.dump();
  }
  EXPECT_TRUE(seen) << "share team is not listed: " << listed.body.dump();
}

TEST_F(ApiTest, SharesAndTheirMembersSurviveARestart) {
  ASSERT_EQ(call("PUT", "/v1/shares/team", kAdmin, R"({"weight":2,"members":["alice"]})").status, 200);
  ASSERT_EQ(call("PUT", "/v1/shares/open", kAdmin, R"({"weight":1,"members":["bob"]})").status, 200);
  ASSERT_EQ(call("PUT", "/v1/shares/open", kAdmin, R"({"weight":1})").status, 200) << "without members: open again";
  submit_as(kBob);  // usage in the default share, which no admin created
  cluster.jobs.persist_usage();
  cluster.settle();

  Cluster restarted;
  restarted.jobs.restore(cluster.memory.load());
  EXPECT_TRUE(restarted.jobs.share_created("team"));
  ASSERT_NE(restarted.jobs.share_members("team"), nullptr);
  EXPECT_EQ(*restarted.jobs.share_members("team"), std::vector<std::string>{"alice"});
  EXPECT_TRUE(restarted.jobs.share_created("open"));
  EXPECT_EQ(restarted.jobs.share_members("open"), nullptr);
  EXPECT_FALSE(restarted.jobs.share_created("default")) << "a usage row is no share an admin created";
}

TEST(RequestTarget, IsSplitBeforeItIsDecoded) {
  auto parsed = [](const std::string& target) {
    net::HttpRequest req;
    req.target = target;
    const std::string problem = net::parse_target(req);
    EXPECT_EQ(problem, "") << target;
    return req;
  };
  EXPECT_EQ(parsed("/v1/nodes/a%20b").segments, (std::vector<std::string>{"v1", "nodes", "a b"}));
  EXPECT_EQ(parsed("/").segments, std::vector<std::string>{});
  const net::HttpRequest q = parsed("/v1/jobs?state=RUNNING&user=a%2Fb+c");
  EXPECT_EQ(q.path, "/v1/jobs");
  EXPECT_EQ(q.query.at("user"), "a/b c");

  auto problem = [](const std::string& target) {
    net::HttpRequest req;
    req.target = target;
    return net::parse_target(req);
  };
  EXPECT_THAT(problem("/v1%2Fnodes"), HasSubstr("encoded \"/\""));
  EXPECT_THAT(problem("/v1%2fnodes"), HasSubstr("encoded \"/\""));
  EXPECT_THAT(problem("/v1/nodes/a%2Fb"), HasSubstr("encoded \"/\""));
  EXPECT_THAT(problem("/v1//nodes"), HasSubstr("empty segment"));
  EXPECT_THAT(problem("//v1/nodes"), HasSubstr("empty segment"));
  EXPECT_THAT(problem("/v1/nodes/"), HasSubstr("empty segment"));
  EXPECT_THAT(problem("/v1/%zz"), HasSubstr("%-escape"));
  EXPECT_THAT(problem("/v1/jobs?x=%z"), HasSubstr("%-escape"));
  EXPECT_THAT(problem("v1/jobs"), HasSubstr("start with"));
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

TEST_F(ApiTest, FaultsAreValidatedSentToTheAgentAndListedOnceApplied) {
  auto agent = cluster.connect("n1", 8);
  const std::string path = "/v1/nodes/n1/faults";
  EXPECT_EQ(call("PUT", path, kAlice, R"({"faults":["core:1=hang"]})").status, 403);
  EXPECT_EQ(call("PUT", "/v1/nodes/nope/faults", kAdmin, R"({"faults":["core:1=hang"]})").status, 404);
  Reply r = call("PUT", path, kAdmin, R"({"faults":["core:1=hang","core:8=corrupt"]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.error_field(), "faults[1]");
  EXPECT_THAT(r.error_message(), HasSubstr("core"));
  EXPECT_EQ(call("PUT", path, kAdmin, R"({"faults":["core:1=hang"],"drain":true})").error_field(), "drain");
  EXPECT_EQ(call("PUT", path, kAdmin, R"({"fault":["core:1=hang"]})").error_field(), "faults");
  EXPECT_TRUE(agent->all<SetFaultsMsg>().empty()) << "an invalid request reached the agent";

  r = call("PUT", path, kAdmin, R"({"faults":["link=throttle:50MB","core:3=corrupt"]})");
  ASSERT_EQ(r.status, 202) << r.body.dump();
  const auto sent = agent->all<SetFaultsMsg>();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].faults, r.body["faults"].get<std::vector<std::string>>());
  EXPECT_EQ(sent[0].faults.front(), "core:3=corrupt") << "canonical order: cores, then the link";
  EXPECT_TRUE(call("GET", "/v1/nodes/n1", kAlice).body["faults"].empty()) << "listed before the agent applied them";

  cluster.send("n1", FaultsMsg{sent[0].faults});
  EXPECT_EQ(call("GET", "/v1/nodes/n1", kAlice).body["faults"], Json(sent[0].faults));

  ASSERT_EQ(call("DELETE", path, kAdmin).status, 202);
  EXPECT_TRUE(agent->all<SetFaultsMsg>().back().faults.empty());
  cluster.send("n1", FaultsMsg{});
  EXPECT_TRUE(call("GET", "/v1/nodes/n1", kAlice).body["faults"].empty());
}

TEST_F(ApiTest, AnAdminForgetsADisconnectedNodesCredential) {
  tokens.add(store::TokenRecord{sha256_hex("n1-secret"), node_token_user("n1"), store::Role::agent, {}});
  EXPECT_EQ(call("DELETE", "/v1/nodes/n1/credential", kAlice).status, 403);
  cluster.connect("n1");
  EXPECT_EQ(call("DELETE", "/v1/nodes/n1/credential", kAdmin).status, 409) << "the node is connected";
  cluster.jobs.agent_gone("n1", cluster.agents["n1"].get());

  const Reply forgotten = call("DELETE", "/v1/nodes/n1/credential", kAdmin);
  EXPECT_EQ(forgotten.status, 200) << forgotten.body.dump();
  EXPECT_FALSE(tokens.authenticate("n1-secret", cluster.clock.system_now()));
  EXPECT_FALSE(tokens.node_credential("n1"));
  EXPECT_EQ(call("DELETE", "/v1/nodes/n1/credential", kAdmin).status, 404) << "nothing left to forget";
}

TEST_F(ApiTest, TokensAreListedWithoutSecretsAdminsAllOthersTheirOwn) {
  const Reply made = call("POST", "/v1/tokens", kAdmin, R"({"user":"alice","role":"viewer","ttl_s":3600})");
  ASSERT_EQ(made.status, 201) << made.body.dump();
  EXPECT_EQ(made.body["role"], "viewer");
  EXPECT_EQ(made.body["expires_at"], format_time(cluster.clock.system_now() + std::chrono::hours(1)));
  const std::string secret = made.body["token"];

  const Reply all = call("GET", "/v1/tokens", kAdmin);
  ASSERT_EQ(all.status, 200);
  EXPECT_EQ(all.body["tokens"].size(), 7u) << "six in the fixture, the join token among them, and the new one";
  const Reply own = call("GET", "/v1/tokens", kAlice);
  ASSERT_EQ(own.body["tokens"].size(), 2u);
  for (const Json& t : own.body["tokens"]) {
    EXPECT_EQ(t["user"], "alice");
    EXPECT_FALSE(t.contains("token"));
    EXPECT_FALSE(t.contains("hash"));
  }
  EXPECT_EQ(own.body["tokens"][1]["id"], made.body["id"]);
  for (const std::string& s : {secret, std::string(kAlice), sha256_hex(secret), sha256_hex(kAlice)}) {
    EXPECT_EQ(all.body.dump().find(s), std::string::npos) << "a listing leaked a secret or its hash";
  }
  EXPECT_NE(own.body["tokens"][0]["last_used_at"], Json(nullptr)) << "alice's token was used to list";
}

TEST_F(ApiTest, ATokenWithATtlExpires) {
  const Reply made = call("POST", "/v1/tokens", kAdmin, R"({"user":"carol","ttl_s":60})");
  ASSERT_EQ(made.status, 201);
  const std::string secret = made.body["token"];
  EXPECT_EQ(call("GET", "/v1/jobs", secret).status, 200);
  cluster.clock.advance(std::chrono::seconds(60));
  const Reply expired = call("GET", "/v1/jobs", secret);
  EXPECT_EQ(expired.status, 401);
  EXPECT_THAT(expired.error_message(), HasSubstr("expired"));
  for (const std::string bad : {R"({"user":"carol","ttl_s":0})", R"({"user":"carol","ttl_s":"1d"})",
                                R"({"user":"carol","ttl_s":1e12})"}) {
    const Reply r = call("POST", "/v1/tokens", kAdmin, bad);
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_EQ(r.error_field(), "ttl_s") << bad;
  }
}

TEST_F(ApiTest, RevokingATokenRefusesItsNextRequest) {
  const Reply made = call("POST", "/v1/tokens", kAdmin, R"({"user":"carol"})");
  const std::string secret = made.body["token"];
  const std::string id = made.body["id"];
  ASSERT_EQ(call("GET", "/v1/jobs", secret).status, 200) << "used once, so its secret is cached as verified";
  EXPECT_EQ(call("DELETE", "/v1/tokens/" + id, kAlice).status, 404) << "another user's token answers as a missing one";
  const Reply revoked = call("DELETE", "/v1/tokens/" + id, kAdmin);
  EXPECT_EQ(revoked.status, 200) << revoked.body.dump();
  EXPECT_EQ(call("GET", "/v1/jobs", secret).status, 401);
  EXPECT_EQ(call("DELETE", "/v1/tokens/" + id, kAdmin).status, 404);
  EXPECT_FALSE(cluster.memory.token_by_hash(sha256_hex(secret))) << "the revocation was not stored";

  const std::string alices = call("GET", "/v1/tokens", kAlice).body["tokens"][0]["id"];
  EXPECT_EQ(call("DELETE", "/v1/tokens/" + alices, kAlice).status, 200) << "anyone may give up their own token";
  EXPECT_EQ(call("GET", "/v1/jobs", kAlice).status, 401);
}

TEST_F(ApiTest, RotatingTheJoinTokenReplacesItInMemoryTheStoreAndItsFile) {
  EXPECT_EQ(call("POST", "/v1/tokens/join/rotate", kOperator).status, 403);
  const Reply rotated = call("POST", "/v1/tokens/join/rotate", kAdmin);
  ASSERT_EQ(rotated.status, 200) << rotated.body.dump();
  const std::string secret = rotated.body["token"];
  EXPECT_FALSE(tokens.authenticate(kJoin, cluster.clock.system_now())) << "the old join token still works";
  const auto who = tokens.authenticate(secret, cluster.clock.system_now());
  ASSERT_TRUE(who);
  EXPECT_EQ(who->role, store::Role::agent);
  EXPECT_FALSE(who->bound_node());
  EXPECT_TRUE(cluster.memory.token_by_hash(sha256_hex(secret)));
  std::ifstream file(join_file);
  std::string written;
  std::getline(file, written);
  EXPECT_EQ(written, secret);
  EXPECT_EQ(std::filesystem::status(join_file).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST_F(ApiTest, ChangesAreAuditedWithWhoFromWhereAndWhatButNoSecret) {
  cluster.connect("n1");
  remote = "192.0.2.7";
  const JobId job = submit_as(kAlice);
  remote = "192.0.2.8";
  ASSERT_EQ(call("POST", "/v1/nodes/n1/drain", kOperator, R"({"reason":"disk"})").status, 200);
  remote = "192.0.2.9";
  const Reply made = call("POST", "/v1/tokens", kAdmin, R"({"user":"carol","role":"viewer"})");
  ASSERT_EQ(made.status, 201);
  const std::string token_id = made.body["id"];
  ASSERT_EQ(call("POST", "/v1/jobs/" + std::to_string(job) + "/cancel", kAdmin).status, 200);
  ASSERT_EQ(call("DELETE", "/v1/tokens/" + token_id, kAdmin).status, 200);

  const Reply log = call("GET", "/v1/audit", kAdmin);
  ASSERT_EQ(log.status, 200) << log.body.dump();
  const Json& events = log.body["events"];
  ASSERT_EQ(events.size(), 5u) << log.body.dump();
  const auto expect = [&](std::size_t i, const std::string& action, const std::string& user, const std::string& role,
                          const std::string& from, const std::string& route, const std::string& target) {
    const Json& e = events[i];
    EXPECT_EQ(e["action"], action) << e.dump();
    EXPECT_EQ(e["user"], user) << e.dump();
    EXPECT_EQ(e["role"], role) << e.dump();
    EXPECT_EQ(e["remote"], from) << e.dump();
    EXPECT_EQ(e["route"], route) << e.dump();
    EXPECT_EQ(e["target"], target) << e.dump();
    if (i > 0) {
      EXPECT_GT(e["id"].get<std::int64_t>(), events[i - 1]["id"].get<std::int64_t>()) << "oldest first";
    }
  };
  const std::string job_id = std::to_string(job);
  expect(0, "job.submitted", "alice", "user", "192.0.2.7", "POST /v1/jobs", job_id);
  EXPECT_EQ(events[0]["details"]["name"], "train");
  expect(1, "node.drained", "olga", "operator", "192.0.2.8", "POST /v1/nodes/n1/drain", "n1");
  EXPECT_THAT(events[1]["details"]["reason"].get<std::string>(), HasSubstr("disk"));
  expect(2, "token.created", "root", "admin", "192.0.2.9", "POST /v1/tokens", token_id);
  EXPECT_EQ(events[2]["details"]["user"], "carol");
  EXPECT_EQ(events[2]["details"]["role"], "viewer");
  expect(3, "job.cancelled", "root", "admin", "192.0.2.9", "POST /v1/jobs/" + job_id + "/cancel", job_id);
  expect(4, "token.revoked", "root", "admin", "192.0.2.9", "DELETE /v1/tokens/" + token_id, token_id);
  const std::string secret = made.body["token"];
  EXPECT_EQ(log.body.dump().find(secret), std::string::npos) << "the audit log holds a token secret";
  EXPECT_EQ(log.body.dump().find(sha256_hex(secret)), std::string::npos) << "the audit log holds a token hash";

  const Reply page = call("GET", "/v1/audit?after=" + events[1]["id"].dump() + "&limit=2", kAdmin);
  ASSERT_EQ(page.body["events"].size(), 2u) << page.body.dump();
  EXPECT_EQ(page.body["events"][0], events[2]);
  EXPECT_EQ(page.body["events"][1], events[3]);
  const Reply last = call("GET", "/v1/audit?after=" + events[1]["id"].dump() + "&limit=2&cursor=" +
                                     page.body["next"].get<std::string>(), kAdmin);
  ASSERT_EQ(last.body["events"].size(), 1u) << last.body.dump();
  EXPECT_EQ(last.body["events"][0], events[4]);
  EXPECT_EQ(last.body["next"], nullptr);
  EXPECT_EQ(log.body["next"], nullptr) << "a short page is the last";
}

TEST_F(ApiTest, RefusedChangesAreNotAuditedAndOnlyAdminsReadTheLog) {
  cluster.connect("n1");
  EXPECT_EQ(call("POST", "/v1/nodes/n1/drain", kAlice).status, 403);
  EXPECT_EQ(call("POST", "/v1/nodes/n1/drain", kOperator, R"({"reason":""})").status, 400);
  EXPECT_EQ(call("POST", "/v1/tokens", kOperator, R"({"user":"carol"})").status, 403);
  EXPECT_EQ(call("POST", "/v1/tokens", kAdmin, R"({"user":"carol","role":"agent"})").status, 400);
  EXPECT_EQ(call("POST", "/v1/jobs", kViewer, kJobBody).status, 403);
  EXPECT_EQ(call("POST", "/v1/jobs", kAlice, "{").status, 400);
  EXPECT_EQ(call("PUT", "/v1/shares/team", kOperator, R"({"weight":2})").status, 403);
  EXPECT_EQ(call("PUT", "/v1/shares/team", kAdmin, R"({"weight":0})").status, 400);
  EXPECT_EQ(call("POST", "/v1/tokens/join/rotate", kOperator).status, 403);
  const Reply log = call("GET", "/v1/audit", kAdmin);
  ASSERT_EQ(log.status, 200);
  EXPECT_EQ(log.body["events"], Json::array()) << log.body.dump();

  for (const char* secret : {kViewer, kOperator, kAlice}) {
    const Reply r = call("GET", "/v1/audit", secret);
    EXPECT_EQ(r.status, 403) << secret;
    EXPECT_FALSE(r.body.contains("events"));
  }
  EXPECT_EQ(call("GET", "/v1/audit?after=-1", kAdmin).error_field(), "after");
  EXPECT_EQ(call("GET", "/v1/audit?limit=0", kAdmin).error_field(), "limit");
  EXPECT_EQ(call("GET", "/v1/audit?since=1", kAdmin).error_field(), "since");
}

}  // namespace
}  // namespace trainyard::daemon::testing
