// A mutating request whose commit fails: answered 503 `unavailable` exactly once, saying nothing was
// changed, and a GET right after shows the state from before the request (issue 53). Each test then
// lets the store write again and makes the same request, which now takes: the refusal left nothing
// half done in the way.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

class ApiFailedWrites : public ApiTest {
 protected:
  // The request made while commits fail; it must be refused as not stored.
  Reply refused(const std::string& method, const std::string& target, const std::string& token, std::string body = "") {
    cluster.store.fail_commits(true);
    Reply r = call(method, target, token, std::move(body));
    cluster.store.fail_commits(false);
    EXPECT_EQ(r.status, 503) << method << " " << target << ": " << r.body.dump();
    EXPECT_EQ(r.error_code(), "unavailable");
    return r;
  }
  Json job(JobId id) { return call("GET", "/v1/jobs/" + std::to_string(id), kAdmin).body; }
  Json node(const std::string& name) { return call("GET", "/v1/nodes/" + name, kAdmin).body; }
  // A one-core job running on n1 (connected here).
  JobId running_job() {
    cluster.connect("n1", 8);
    const JobId id = submit_as(kAlice);
    const AttemptId attempt = cluster.launches().at("n1").back().attempt_id;
    cluster.started("n1", attempt);
    EXPECT_EQ(job(id)["state"], "RUNNING");
    return id;
  }
  bool share_listed(const std::string& name) {
    const Reply list = call("GET", "/v1/shares", kAdmin);
    for (const Json& row : list.body["shares"]) {
      if (row["name"] == name) return true;
    }
    return false;
  }
  std::string path(JobId id, const std::string& suffix = "") { return "/v1/jobs/" + std::to_string(id) + suffix; }
};

TEST_F(ApiFailedWrites, ACancelOfAPendingJobNotStoredLeavesItQueued) {
  const JobId id = submit_as(kAlice);
  const Reply r = refused("POST", path(id, "/cancel"), kAlice);
  EXPECT_EQ(r.error_message(), "the cancel of job " + std::to_string(id) + " could not be stored; nothing was changed");
  EXPECT_EQ(job(id)["state"], "PENDING");
  EXPECT_EQ(job(id)["cancel_requested"], false);
  EXPECT_EQ(cluster.jobs.pending_count(), 1u) << "the job is back in the queue";
  EXPECT_TRUE(cluster.events_of_kind("job.cancelled").empty());
  cluster.connect("n1", 8);
  EXPECT_EQ(cluster.launches().at("n1").back().job_id, id) << "a job whose cancel was refused runs as any other";
}

TEST_F(ApiFailedWrites, ACancelOfARunningJobNotStoredKillsNothing) {
  const JobId id = running_job();
  refused("POST", path(id, "/cancel"), kAlice);
  EXPECT_EQ(job(id)["cancel_requested"], false);
  EXPECT_EQ(job(id)["state"], "RUNNING");
  EXPECT_NE(job(id)["reason"], "cancel requested");
  EXPECT_TRUE(cluster.agents.at("n1")->kills().empty()) << "a cancel not stored must not be acted on";
  EXPECT_EQ(call("POST", path(id, "/cancel"), kAlice).status, 200);
  EXPECT_EQ(cluster.agents.at("n1")->kills().size(), 1u);
}

TEST_F(ApiFailedWrites, AHoldNotStoredLeavesTheJobQueued) {
  const JobId id = submit_as(kAlice);
  const Reply r = refused("POST", path(id, "/hold"), kAlice);
  EXPECT_THAT(r.error_message(), HasSubstr("the hold of job " + std::to_string(id) + " could not be stored"));
  EXPECT_EQ(job(id)["held"], Json(nullptr)) << job(id).dump();
  EXPECT_EQ(cluster.jobs.pending_count(), 1u);
  cluster.connect("n1", 8);
  EXPECT_FALSE(cluster.launches().empty()) << "the job was put back in the queue";
}

TEST_F(ApiFailedWrites, AReleaseNotStoredLeavesTheJobHeld) {
  const JobId id = submit_as(kAlice);
  ASSERT_EQ(call("POST", path(id, "/hold"), kAlice).status, 200);
  const Json held = job(id)["held"];
  refused("POST", path(id, "/release"), kAlice);
  EXPECT_EQ(job(id)["held"], held);
  cluster.connect("n1", 8);
  EXPECT_TRUE(cluster.launches().empty()) << "a release not stored must not queue the job";
  EXPECT_EQ(call("POST", path(id, "/release"), kAlice).status, 200);
  EXPECT_FALSE(cluster.launches().empty());
}

TEST_F(ApiFailedWrites, ARequeueNotStoredStopsNothing) {
  const JobId id = running_job();
  const Json before = job(id);
  const Reply r = refused("POST", path(id, "/requeue"), kAlice);
  EXPECT_THAT(r.error_message(), HasSubstr("the requeue of job " + std::to_string(id)));
  EXPECT_EQ(job(id)["reason"], before["reason"]);
  EXPECT_TRUE(cluster.agents.at("n1")->kills().empty());
  EXPECT_EQ(call("POST", path(id, "/requeue"), kAlice).status, 200) << "the job is not left marked as stopping";
}

TEST_F(ApiFailedWrites, AnUpdateNotStoredKeepsTheOldSpec) {
  const JobId id = submit_as(kAlice);
  refused("PATCH", path(id), kAdmin, R"({"priority":7})");
  EXPECT_EQ(job(id)["spec"]["priority"], 0);
  EXPECT_EQ(cluster.jobs.pending_count(), 1u);
  EXPECT_EQ(call("PATCH", path(id), kAdmin, R"({"priority":7})").body["spec"]["priority"], 7);
}

TEST_F(ApiFailedWrites, AnArrayCancelNotStoredCancelsNoTask) {
  const Reply submitted = call("POST", "/v1/jobs", kAlice,
                               R"({"name":"sweep","nodes":1,"wait_for_capacity":true,"array":"0-2","command":{"argv":["/bin/true"]}})");
  ASSERT_EQ(submitted.status, 201);
  const JobId array = submitted.body["id"];
  const Reply r = refused("POST", path(array, "/cancel"), kAlice);
  EXPECT_EQ(r.error_message(), "the cancel of array " + std::to_string(array) + " could not be stored; nothing was changed");
  EXPECT_EQ(cluster.jobs.pending_count(), 3u);
  refused("POST", path(array, "/hold"), kAlice);
  EXPECT_EQ(cluster.jobs.pending_count(), 3u);
}

TEST_F(ApiFailedWrites, ADrainNotStoredLeavesTheNodeInService) {
  cluster.connect("n1", 8);
  const Reply r = refused("POST", "/v1/nodes/n1/drain", kAdmin, R"({"reason":"disk"})");
  EXPECT_EQ(r.error_message(), "the drain of node n1 could not be stored; nothing was changed");
  EXPECT_EQ(node("n1")["state"], "HEALTHY");
  EXPECT_EQ(node("n1")["free_cores"], 8);
  submit_as(kAlice);
  EXPECT_FALSE(cluster.launches().empty()) << "the node still takes work";
}

TEST_F(ApiFailedWrites, AnUndrainNotStoredLeavesTheNodeDrained) {
  cluster.connect("n1", 8);
  ASSERT_EQ(call("POST", "/v1/nodes/n1/drain", kAdmin).status, 200);
  const Reply r = refused("POST", "/v1/nodes/n1/undrain", kAdmin);
  EXPECT_EQ(r.error_message(), "the undrain of node n1 could not be stored; it stays DRAINED");
  EXPECT_EQ(node("n1")["state"], "DRAINED");
  submit_as(kAlice);
  EXPECT_TRUE(cluster.launches().empty());
  EXPECT_EQ(call("POST", "/v1/nodes/n1/undrain", kAdmin).body["state"], "HEALTHY");
}

TEST_F(ApiFailedWrites, AShareChangeOrDeletionNotStoredChangesNoShare) {
  const Reply r = refused("PUT", "/v1/shares/vision", kAdmin, R"({"weight":3})");
  EXPECT_EQ(r.error_message(), "the change of share vision could not be stored; nothing was changed");
  EXPECT_FALSE(share_listed("vision"));
  ASSERT_EQ(call("PUT", "/v1/shares/vision", kAdmin, R"({"weight":3})").status, 200);
  refused("DELETE", "/v1/shares/vision", kAdmin);
  EXPECT_TRUE(share_listed("vision")) << "a deletion not stored leaves the share";
  EXPECT_EQ(call("DELETE", "/v1/shares/vision", kAdmin).status, 200);
  EXPECT_FALSE(share_listed("vision"));
}

TEST_F(ApiFailedWrites, TokensAndTheJoinTokenAreRefusedWhenNotStored) {
  refused("POST", "/v1/tokens", kAdmin, R"({"user":"carol"})");
  const Reply tokens = call("GET", "/v1/tokens", kAdmin);
  for (const Json& t : tokens.body["tokens"]) EXPECT_NE(t["user"], "carol");
  refused("POST", "/v1/tokens/join/rotate", kAdmin);
}

TEST_F(ApiFailedWrites, ARevocationNotStoredTakesAccessAwayAndRevokingAgainStoresIt) {
  const Reply made = call("POST", "/v1/tokens", kAdmin, R"({"user":"carol"})");
  ASSERT_EQ(made.status, 201);
  const std::string id = made.body["id"];
  const Reply r = refused("DELETE", "/v1/tokens/" + id, kAdmin);
  EXPECT_THAT(r.error_message(), HasSubstr("revoke it again"));
  EXPECT_EQ(call("GET", "/v1/whoami", made.body["token"]).status, 401) << "access is taken away at once";
  EXPECT_TRUE(cluster.memory.token_by_hash(sha256_hex(made.body["token"].get<std::string>())))
      << "the store still holds it: a restart would bring it back";
  EXPECT_EQ(call("DELETE", "/v1/tokens/" + id, kAdmin).status, 200) << "as the refusal said, it can be revoked again";
  EXPECT_FALSE(cluster.memory.token_by_hash(sha256_hex(made.body["token"].get<std::string>())));
  EXPECT_EQ(call("DELETE", "/v1/tokens/" + id, kAdmin).status, 404) << "once stored, it is gone";
}

}  // namespace
}  // namespace trainyard::daemon::testing
