// The REST API on shares: created by admins, quotas, kept across a restart.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

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

// A job held by its owner has left the scheduler's queue, yet it is pending: the table says how many,
// so the overview counts what the queue counts.
TEST_F(ApiTest, TheShareTableCountsHeldJobsBesideTheQueuedOnes) {
  const std::string spec = R"({"name":"t","wait_for_capacity":true,"nodes":64,"command":{"argv":["/bin/true"]}})";
  ASSERT_EQ(call("POST", "/v1/jobs", kAlice, spec).status, 201);
  ASSERT_EQ(call("POST", "/v1/jobs", kAlice, spec).status, 201);
  ASSERT_EQ(call("POST", "/v1/jobs/2/hold", kAlice).status, 200);
  const auto row_of = [&](const std::string& share) {
    const Reply table = call("GET", "/v1/shares", kAdmin);
    for (const Json& row : table.body["shares"]) {
      if (row["name"] == share) return row;
    }
    return Json();
  };
  Json row = row_of("default");
  EXPECT_EQ(row["pending_jobs"], 1) << row.dump();
  EXPECT_EQ(row["held_jobs"], 1) << row.dump();
  ASSERT_EQ(call("POST", "/v1/jobs/2/release", kAlice).status, 200);
  row = row_of("default");
  EXPECT_EQ(row["pending_jobs"], 2) << row.dump();
  EXPECT_EQ(row["held_jobs"], 0) << row.dump();
}

TEST_F(ApiTest, AShareMadeByMistakeIsDeletedOnlyWhileNoJobIsInItAndStaysGoneAfterARestart) {
  ASSERT_EQ(call("PUT", "/v1/shares/oops", kAdmin, R"({"weight":3,"members":["alice"]})").status, 200);
  const Reply pending = call("POST", "/v1/jobs", kAlice,
                             R"({"name":"t","share":"oops","wait_for_capacity":true,"command":{"argv":["/bin/true"]}})");
  ASSERT_EQ(pending.status, 201) << pending.text;
  EXPECT_EQ(call("DELETE", "/v1/shares/oops", kAlice).status, 403) << "admins only";
  Reply r = call("DELETE", "/v1/shares/oops", kAdmin);
  EXPECT_EQ(r.status, 409);
  EXPECT_THAT(r.error_message(), HasSubstr("share oops has 1 pending or running job (job 1)"));
  EXPECT_EQ(call("POST", "/v1/jobs/1/cancel", kAlice).status, 200);

  r = call("DELETE", "/v1/shares/oops", kAdmin);
  EXPECT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body, (Json{{"name", "oops"}, {"deleted", true}}));
  EXPECT_FALSE(cluster.jobs.share_created("oops"));
  const Reply table = call("GET", "/v1/shares", kAdmin);
  for (const Json& row : table.body["shares"]) EXPECT_NE(row["name"], "oops");
  EXPECT_EQ(call("GET", "/v1/jobs/1", kAlice).body["share"], "oops") << "an ended job keeps its share's name";
  EXPECT_EQ(call("DELETE", "/v1/shares/oops", kAdmin).status, 404);
  EXPECT_EQ(call("DELETE", "/v1/shares/never", kAdmin).status, 404);
  EXPECT_EQ(call("DELETE", "/v1/shares/default", kAdmin).status, 403);
  EXPECT_EQ(call("DELETE", "/v1/shares/system", kAdmin).error_field(), "name");
  EXPECT_EQ(call("DELETE", "/v1/shares/b%1Bad", kAdmin).error_field(), "name");
  EXPECT_EQ(call("GET", "/v1/audit", kAdmin).body["events"].back()["action"], "share.deleted");

  cluster.jobs.persist_usage();
  cluster.settle();
  for (const store::ShareRecord& row : cluster.memory.load().shares) EXPECT_NE(row.name, "oops");
  Cluster restarted;
  restarted.jobs.restore(cluster.memory.load());
  EXPECT_FALSE(restarted.jobs.share_created("oops"));

  r = call("PUT", "/v1/shares/oops", kAdmin, R"({"weight":1})");
  EXPECT_EQ(r.status, 200) << "a deleted share's name may be used again";
  EXPECT_EQ(r.body["members"], nullptr);
}

}  // namespace
}  // namespace trainyard::daemon::testing
