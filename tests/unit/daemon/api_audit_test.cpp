// The REST API's audit log: who changed what, from where, never a secret.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

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
