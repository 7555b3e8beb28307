// The REST API on nodes: what users may see, faults, forgetting a node's credential.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

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
    EXPECT_EQ(admin_n1["jobs"], Json::array({"1"})) << target;

    const Reply bob = call("GET", target, kBob);
    const Json& bob_n1 = target == "/v1/nodes" ? bob.body["nodes"][0] : bob.body;
    EXPECT_FALSE(bob_n1.contains("data_addr")) << target << ": " << bob_n1.dump();
    EXPECT_EQ(bob_n1["attempts"], Json::array()) << target;
    EXPECT_EQ(bob_n1["jobs"], Json::array()) << target;
    EXPECT_EQ(bob_n1["other_attempts"], 1) << target;

    const Reply alice = call("GET", target, kAlice);
    const Json& alice_n1 = target == "/v1/nodes" ? alice.body["nodes"][0] : alice.body;
    EXPECT_FALSE(alice_n1.contains("data_addr")) << target;
    EXPECT_EQ(alice_n1["attempts"], Json::array({attempt})) << target;
    EXPECT_EQ(alice_n1["jobs"], Json::array({"1"})) << target;
    EXPECT_EQ(alice_n1["other_attempts"], 0) << target;
  }
}

TEST_F(ApiTest, DrainAndUndrainAnswerTheWholeNodeAndFreeMeansUsableNow) {
  cluster.connect("n1", 8);
  ASSERT_EQ(call("POST", "/v1/jobs", kAlice, R"({"name":"train","nodes":1,"cores_per_node":3,"command":{"argv":["/bin/true"]}})")
                .status,
            201);
  const Json before = call("GET", "/v1/nodes/n1", kAdmin).body;
  EXPECT_EQ(before["free_cores"], 5) << before.dump();
  EXPECT_EQ(before["used_cores"], 3) << before.dump();

  const Reply drained = call("POST", "/v1/nodes/n1/drain", kAdmin, "");
  ASSERT_EQ(drained.status, 200) << drained.body.dump();
  EXPECT_EQ(drained.body["state"], "DRAINED");
  EXPECT_EQ(drained.body["free_cores"], 0) << "a drained node takes no work: none of its cores is free";
  EXPECT_EQ(drained.body["used_cores"], 3);
  EXPECT_EQ(drained.body["attempts"].size(), 1u) << "the answer is the node as GET shows it";

  const Reply undrained = call("POST", "/v1/nodes/n1/undrain", kAdmin, "");
  ASSERT_EQ(undrained.status, 200) << undrained.body.dump();
  EXPECT_EQ(undrained.body["free_cores"], 5);
  EXPECT_EQ(undrained.body["attempts"].size(), 1u);
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

}  // namespace
}  // namespace trainyard::daemon::testing
