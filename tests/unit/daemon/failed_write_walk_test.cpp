// Every mutating route of the API with its commit failing (issue 53), walked from the route table
// itself: a route the table declares without a case here fails, so a new route cannot ship without
// being tried against a store that refuses it. Each request is made on a cluster where it would
// take, with the next commit failing; it must be answered exactly once, 503 `unavailable` saying the
// change was not made, with everything a GET reads and everything the agents were sent as before.
// Once the store writes again the same request takes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "daemon/api/routes.h"
#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::ContainsRegex;

// What a request does when the commit it makes fails.
enum class OnFailedCommit {
  refused,  // 503 unavailable, nothing changed
  // Answered as usual: what it does is not a stored change (faults go to the agent, a health check
  // runs in memory, a test message is sent); its audit record is the daemon's own change, stored
  // once the store writes again.
  acts_unstored,
};

struct Case {
  std::string target;  // the route's pattern filled in for the world below
  std::string body;
  OnFailedCommit on_failed_commit = OnFailedCommit::refused;
  int status_anyway = 0;  // the answer of an acts_unstored request
  // What a GET reads that a refused request changes all the same (docs/DESIGN.md says why).
  std::string changed_anyway;
};

const char* const kWebhookBody = R"({"url":"https://hooks.example.com/x","events":["job.failed"]})";

// By "METHOD pattern". The world they are made in: job 1 runs on n1, job 2 is pending (it needs more
// nodes than there are), job 3 is held; n2 is idle, n3 drained, n4 gone with its own credential;
// share "team", token {token} and webhook 1 with its dead-lettered delivery 1 exist.
const std::map<std::string, Case>& cases() {
  static const std::map<std::string, Case> all = {
      {"POST /v1/jobs", {"/v1/jobs", kJobBody}},
      {"POST /v1/jobs/{id}/cancel", {"/v1/jobs/1/cancel", ""}},
      {"POST /v1/jobs/{id}/hold", {"/v1/jobs/2/hold", ""}},
      {"POST /v1/jobs/{id}/release", {"/v1/jobs/3/release", ""}},
      {"POST /v1/jobs/{id}/requeue", {"/v1/jobs/1/requeue", ""}},
      {"PATCH /v1/jobs/{id}", {"/v1/jobs/2", R"({"priority":3})"}},
      {"POST /v1/nodes/{name}/drain", {"/v1/nodes/n2/drain", R"({"reason":"disk"})"}},
      {"POST /v1/nodes/{name}/undrain", {"/v1/nodes/n3/undrain", ""}},
      {"DELETE /v1/nodes/{name}/credential", {"/v1/nodes/n4/credential", ""}},
      {"PUT /v1/nodes/{name}/faults", {"/v1/nodes/n2/faults", R"({"faults":[]})", OnFailedCommit::acts_unstored, 202}},
      {"DELETE /v1/nodes/{name}/faults", {"/v1/nodes/n2/faults", "", OnFailedCommit::acts_unstored, 202}},
      {"POST /v1/canaries", {"/v1/canaries", ""}},
      {"POST /v1/healthchecks",
       {"/v1/healthchecks", R"({"nodes":["n2"],"suites":["accelerator"]})", OnFailedCommit::acts_unstored, 202}},
      {"POST /v1/tokens", {"/v1/tokens", R"({"user":"carol"})"}},
      {"POST /v1/tokens/join/rotate", {"/v1/tokens/join/rotate", ""}},
      // Access is taken away at once; revoking it again stores the revocation.
      {"DELETE /v1/tokens/{token_id}", {"/v1/tokens/{token}", "", OnFailedCommit::refused, 0, "/v1/tokens"}},
      {"PUT /v1/shares/{name}", {"/v1/shares/team", R"({"weight":5})"}},
      {"DELETE /v1/shares/{name}", {"/v1/shares/team", ""}},
      {"POST /v1/webhooks", {"/v1/webhooks", kWebhookBody}},
      {"DELETE /v1/webhooks/{id}", {"/v1/webhooks/1", ""}},
      // No sender runs here: a test message is answered 503 "not running" with or without a store.
      {"POST /v1/webhooks/{id}/test", {"/v1/webhooks/1/test", "", OnFailedCommit::acts_unstored, 503}},
      {"POST /v1/webhooks/{id}/deliveries/{n}/retry", {"/v1/webhooks/1/deliveries/1/retry", ""}},
  };
  return all;
}

std::string key_of(const Route& route) { return std::string(route.method) + " " + std::string(route.pattern); }

std::vector<std::string> mutating_routes() {
  std::vector<std::string> keys;
  for (const Route& route : api_routes()) {
    if (route.method != "GET") keys.push_back(key_of(route));
  }
  return keys;
}

const Route& route_of(const std::string& key) {
  for (const Route& route : api_routes()) {
    if (key_of(route) == key) return route;
  }
  throw std::out_of_range(key);
}

TEST(FailedWriteWalk, EveryCaseIsAMutatingRoute) {
  const std::vector<std::string> mutating = mutating_routes();
  const std::set<std::string> routes(mutating.begin(), mutating.end());
  for (const auto& [key, c] : cases()) EXPECT_TRUE(routes.contains(key)) << key << " is not a mutating route";
}

class FailedWriteWalk : public ApiTest, public ::testing::WithParamInterface<std::string> {
 protected:
  FailedWriteWalk() {
    api.set_webhooks(webhooks, WebhookOptions{.allowed_hosts = {"hooks.example.com"}});
    build_world();
  }

  void build_world() {
    EXPECT_EQ(submit_as(kAlice), 1);
    EXPECT_EQ(call("POST", "/v1/jobs", kAlice,
                   R"({"name":"wide","nodes":8,"wait_for_capacity":true,"command":{"argv":["/bin/true"]}})")
                  .status,
              201);
    EXPECT_EQ(submit_as(kAlice), 3);
    EXPECT_EQ(call("POST", "/v1/jobs/3/hold", kAlice).status, 200);
    cluster.connect("n1");
    cluster.started("n1", cluster.agents["n1"]->launches().at(0).attempt_id);
    cluster.connect("n2");
    cluster.connect("n3");
    EXPECT_EQ(call("POST", "/v1/nodes/n3/drain", kAdmin).status, 200);
    cluster.connect("n4");
    cluster.jobs.agent_gone("n4", cluster.agents["n4"].get());
    cluster.settle();
    tokens.add(new_token_record("n4-credential", node_token_user("n4"), store::Role::agent, cluster.clock.system_now()));
    EXPECT_EQ(call("PUT", "/v1/shares/team", kAdmin, R"({"weight":2})").status, 200);
    token = call("POST", "/v1/tokens", kAdmin, R"({"user":"alice"})").body.value("id", "");
    EXPECT_EQ(call("POST", "/v1/webhooks", kAlice, kWebhookBody).status, 201);
    store::Change dead_lettered;
    dead_lettered.webhook_deliveries.push_back(
        store::WebhookDelivery{1, 1, 1, 1, store::DeliveryState::dead, 8, cluster.clock.system_now(), std::nullopt});
    cluster.memory.commit(std::span<const store::Change>(&dead_lettered, 1));
  }

  std::string target_of(const Case& c) const {
    std::string target = c.target;
    if (const auto at = target.find("{token}"); at != std::string::npos) target.replace(at, 7, token);
    return target;
  }

  // Everything a GET reads of the world, and what the agents were sent.
  Json readable_state() {
    Json state;
    for (const std::string target :
         {"/v1/jobs", "/v1/jobs/1", "/v1/jobs/2", "/v1/jobs/3", "/v1/jobs/1/attempts", "/v1/queue", "/v1/nodes",
          "/v1/shares", "/v1/tokens", "/v1/webhooks", "/v1/webhooks/1/deliveries", "/v1/healthchecks", "/v1/canaries",
          "/v1/events?limit=1000", "/v1/audit?limit=1000"}) {
      const Reply r = call("GET", target, kAdmin);
      state[target] = {{"status", r.status}, {"body", r.body}};
    }
    for (const auto& [name, agent] : cluster.agents) state["sent to " + name] = agent->sent.size();
    return state;
  }
  static void expect_unchanged(const Json& before, const Json& after, const std::string& changed_anyway) {
    for (const auto& [read, answer] : before.items()) {
      if (read == changed_anyway) continue;
      EXPECT_EQ(after[read], answer) << "a refused request changed " << read;
    }
  }
  // What was audited and what the agents were told to start or stop: what a change done later shows.
  Json acted() {
    Json done = {{"audit", call("GET", "/v1/audit?limit=1000", kAdmin).body}};
    for (const auto& [name, agent] : cluster.agents) {
      done["launches on " + name] = agent->launches().size();
      done["kills on " + name] = agent->kills().size();
    }
    return done;
  }

  WebhookRegistry webhooks{{}, 0};
  std::string token;
};

TEST_P(FailedWriteWalk, AFailedCommitIsAnsweredOnceAndChangesNothing) {
  const std::string& key = GetParam();
  const auto found = cases().find(key);
  ASSERT_NE(found, cases().end()) << "no case for " << key << ": add one to cases()";
  const Case& c = found->second;
  const Route& route = route_of(key);
  const std::string method(route.method);
  const std::string target = target_of(c);

  const Json before = readable_state();
  const Json acted_before = acted();
  const std::int64_t tried = cluster.store.commits_tried();
  cluster.store.fail_next_commit();
  const auto reply = send(method, target, kAdmin, c.body);
  cluster.settle();
  const bool wrote = cluster.store.commits_tried() > tried;
  EXPECT_EQ(reply->answers, 1);
  if (c.on_failed_commit == OnFailedCommit::refused) {
    EXPECT_TRUE(wrote) << "the request tried no commit";
    EXPECT_EQ(reply->status, 503) << reply->text;
    EXPECT_EQ(reply->error_code(), "unavailable");
    EXPECT_THAT(reply->error_message(),
                ContainsRegex("could not be stored; (nothing was changed|it stays|the old one stays|it was not "
                              "accepted|revoke it again)"));
    expect_unchanged(before, readable_state(), c.changed_anyway);
  } else {
    EXPECT_EQ(reply->status, c.status_anyway) << reply->text;
  }

  // Time goes on (less than a node's timeout): the request is not answered again, and a refused one
  // not done behind its caller's back.
  for (int i = 0; i < 6; ++i) {
    cluster.advance(Millis(500));
    cluster.jobs.tick();
  }
  cluster.settle();
  EXPECT_EQ(reply->answers, 1) << "answered again later";
  EXPECT_FALSE(cluster.jobs.changes_wait_for_store());
  if (c.on_failed_commit == OnFailedCommit::refused) {
    EXPECT_EQ(acted(), acted_before) << "the refused change was acted on later";
    const Reply again = call(method, target, kAdmin, c.body);
    EXPECT_EQ(again.status, route.success_status) << "once the store writes, the same request takes: " << again.text;
  } else {
    EXPECT_EQ(acted()["audit"]["events"].size(), acted_before["audit"]["events"].size() + (wrote ? 1 : 0))
        << "its audit record was lost, or stored twice";
  }
}

std::string route_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name;
  for (const char ch : info.param) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryMutatingRoute, FailedWriteWalk, ::testing::ValuesIn(mutating_routes()), route_name);

}  // namespace
}  // namespace trainyard::daemon::testing
