// The authorization matrix, walked from the route table itself: every route the table
// declares has a case here and every case is a route, so a new route cannot ship without its role
// check being tested. Each route is called by every kind of caller, and nothing of alice's job
// reaches bob: not its data, and not a difference between "yours is hidden" and "there is none".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <set>

#include "daemon/api/routes.h"
#include "tests/unit/daemon/api_fixture.h"

namespace trainyard::daemon::testing {
namespace {

enum class Caller { none, bad, expired, revoked, agent, viewer, owner, other, op, admin };
constexpr std::array kEveryCaller = {Caller::none,   Caller::bad,   Caller::expired, Caller::revoked, Caller::agent,
                                     Caller::viewer, Caller::owner, Caller::other,   Caller::op,      Caller::admin};

// What of alice's job 1 bob must never see.
constexpr std::array<const char*, 5> kAliceSecrets = {"alice", "alices-private-run", "ALICE-LOG-LINE", "12345.5",
                                                      "987654321"};
const char* const kAliceJob =
    R"({"name":"alices-private-run","nodes":1,"wait_for_capacity":true,"command":{"argv":["/bin/true"]}})";

const char* const kWebhookBody = R"({"url":"https://hooks.example.com/x","events":["job.failed"]})";

struct RouteCase {
  std::string target;  // the route's pattern filled in; job 1 is alice's, running on n1; n2 is idle
  std::string body;
  // viewer, owner (alice), other (bob), operator, admin; callers without a valid API token get
  // 401 unless the route needs none, when they get `open`
  std::array<int, 5> status;
  int open = 401;
};

// Every route, by "METHOD pattern". In call order: a later case may depend on what an earlier one
// did as the same caller (a drained node is undrained; the faults set are cleared).
const std::vector<std::pair<std::string, RouteCase>>& cases() {
  static const std::vector<std::pair<std::string, RouteCase>> all = {
      {"GET /healthz", {"/healthz", "", {200, 200, 200, 200, 200}, 200}},
      {"GET /v1/openapi.json", {"/v1/openapi.json", "", {200, 200, 200, 200, 200}, 200}},
      {"GET /metrics", {"/metrics", "", {200, 403, 403, 200, 200}}},
      {"POST /v1/healthchecks",
       {"/v1/healthchecks", R"({"nodes":["n2"],"suites":["accelerator"]})", {403, 403, 403, 202, 202}}},
      {"GET /v1/healthchecks/{id}", {"/v1/healthchecks/{setup-check}", "", {200, 200, 200, 200, 200}}},
      {"GET /v1/jobs", {"/v1/jobs?user=alice", "", {200, 200, 403, 200, 200}}},
      {"POST /v1/jobs", {"/v1/jobs", kJobBody, {403, 201, 201, 201, 201}}},
      {"GET /v1/jobs/{id}", {"/v1/jobs/1", "", {200, 200, 404, 200, 200}}},
      // Job 1 runs: only a pending job is held or changed, and it is not held.
      {"POST /v1/jobs/{id}/hold", {"/v1/jobs/1/hold", "", {403, 409, 404, 403, 409}}},
      {"POST /v1/jobs/{id}/release", {"/v1/jobs/1/release", "", {403, 409, 404, 403, 409}}},
      {"PATCH /v1/jobs/{id}", {"/v1/jobs/1", R"({"priority":0})", {403, 409, 404, 403, 409}}},
      {"GET /v1/jobs/{id}/attempts", {"/v1/jobs/1/attempts", "", {200, 200, 404, 200, 200}}},
      {"GET /v1/jobs/{id}/attempts/{n}/provenance",
       {"/v1/jobs/1/attempts/1/provenance", "", {200, 200, 404, 200, 200}}},
      {"GET /v1/jobs/{id}/logs", {"/v1/jobs/1/logs", "", {200, 200, 404, 200, 200}}},
      {"GET /v1/jobs/{id}/checkpoints", {"/v1/jobs/1/checkpoints", "", {200, 200, 404, 200, 200}}},
      {"GET /v1/jobs/{id}/metrics", {"/v1/jobs/1/metrics", "", {200, 200, 404, 200, 200}}},
      {"GET /v1/queue", {"/v1/queue", "", {200, 200, 200, 200, 200}}},
      {"GET /v1/nodes", {"/v1/nodes?state=HEALTHY,DRAINED&name_prefix=n&limit=50", "", {200, 200, 200, 200, 200}}},
      {"GET /v1/nodes/{name}", {"/v1/nodes/n1", "", {200, 200, 200, 200, 200}}},
      {"GET /v1/nodes/{name}/health", {"/v1/nodes/n1/health", "", {200, 200, 200, 200, 200}}},
      {"PUT /v1/nodes/{name}/faults", {"/v1/nodes/n1/faults", R"({"faults":[]})", {403, 403, 403, 202, 202}}},
      {"DELETE /v1/nodes/{name}/faults", {"/v1/nodes/n1/faults", "", {403, 403, 403, 202, 202}}},
      {"POST /v1/nodes/{name}/drain", {"/v1/nodes/n1/drain", "", {403, 403, 403, 200, 200}}},
      {"POST /v1/nodes/{name}/undrain", {"/v1/nodes/n1/undrain", "", {403, 403, 403, 200, 200}}},
      {"DELETE /v1/nodes/{name}/credential", {"/v1/nodes/n1/credential", "", {403, 403, 403, 403, 409}}},
      {"GET /v1/goodput", {"/v1/goodput?window=24h", "", {200, 200, 200, 200, 200}}},
      {"GET /v1/cluster", {"/v1/cluster", "", {200, 200, 200, 200, 200}}},
      {"GET /v1/cluster/history", {"/v1/cluster/history?window=7d", "", {200, 200, 200, 200, 200}}},
      {"GET /v1/healthchecks", {"/v1/healthchecks?limit=5", "", {200, 200, 200, 200, 200}}},
      {"GET /v1/canaries", {"/v1/canaries?limit=5", "", {200, 200, 200, 200, 200}}},
      {"POST /v1/canaries", {"/v1/canaries", "", {403, 403, 403, 201, 201}}},
      {"GET /v1/shares", {"/v1/shares", "", {200, 200, 200, 200, 200}}},
      {"PUT /v1/shares/{name}", {"/v1/shares/team", R"({"weight":2})", {403, 403, 403, 403, 200}}},
      {"DELETE /v1/shares/{name}", {"/v1/shares/team", "", {403, 403, 403, 403, 200}}},
      {"GET /v1/whoami", {"/v1/whoami", "", {200, 200, 200, 200, 200}}},
      {"GET /v1/tokens", {"/v1/tokens?limit=50", "", {200, 200, 200, 200, 200}}},
      {"POST /v1/tokens", {"/v1/tokens", R"({"user":"carol"})", {403, 403, 403, 403, 201}}},
      {"POST /v1/tokens/join/rotate", {"/v1/tokens/join/rotate", "", {403, 403, 403, 403, 200}}},
      {"GET /v1/audit", {"/v1/audit", "", {403, 403, 403, 403, 200}}},
      {"GET /v1/events", {"/v1/events?type=job.*&job=1", "", {200, 200, 200, 200, 200}}},
      // Webhook 1 is alice's; no sender runs here, so a test message is a 503 to whoever may send it.
      {"POST /v1/webhooks", {"/v1/webhooks", kWebhookBody, {403, 201, 201, 201, 201}}},
      {"GET /v1/webhooks", {"/v1/webhooks", "", {200, 200, 200, 200, 200}}},
      {"GET /v1/webhooks/{id}", {"/v1/webhooks/1", "", {404, 200, 404, 404, 200}}},
      {"POST /v1/webhooks/{id}/test", {"/v1/webhooks/1/test", "", {404, 503, 404, 404, 503}}},
      {"GET /v1/webhooks/{id}/deliveries", {"/v1/webhooks/1/deliveries", "", {404, 200, 404, 404, 200}}},
      // Its delivery 1 was dead-lettered: only alice and an admin may send it again.
      {"POST /v1/webhooks/{id}/deliveries/{n}/retry",
       {"/v1/webhooks/1/deliveries/1/retry", "", {404, 202, 404, 404, 202}}},
      {"DELETE /v1/webhooks/{id}", {"/v1/webhooks/1", "", {404, 200, 404, 404, 200}}},
      {"GET /v1/events/stream", {"/v1/events/stream?type=job.*&job=1&after=0", "", {200, 200, 200, 200, 200}}},
      // Alice's second token: only she and an admin may revoke it; to others it does not exist.
      {"DELETE /v1/tokens/{token_id}", {"/v1/tokens/{alices-token}", "", {404, 200, 404, 404, 200}}},
      // Next to last: it stops alice's job to queue it again.
      {"POST /v1/jobs/{id}/requeue", {"/v1/jobs/1/requeue", "", {403, 200, 404, 403, 200}}},
      // Last: it ends alice's job.
      {"POST /v1/jobs/{id}/cancel", {"/v1/jobs/1/cancel", "", {403, 200, 404, 403, 200}}},
  };
  return all;
}

std::string key_of(const Route& route) { return std::string(route.method) + " " + std::string(route.pattern); }

TEST(RouteWalk, EveryRouteInTheTableHasItsCaseAndEveryCaseIsARoute) {
  std::set<std::string> table, walked;
  for (const Route& route : api_routes()) EXPECT_TRUE(table.insert(key_of(route)).second) << key_of(route) << " twice";
  for (const auto& [key, c] : cases()) walked.insert(key);
  EXPECT_EQ(table, walked);
}

class RouteWalkTest : public ApiTest, public ::testing::WithParamInterface<Caller> {
 protected:
  RouteWalkTest() {
    api.set_metrics_exposition([] { return std::string("trainyard_up 1\n"); }, false);
    api.set_webhooks(webhooks, WebhookOptions{.allowed_hosts = {"hooks.example.com"}});
    // Alice's job 1 runs on n1 and has steps, a checkpoint and a log line; n2 is idle.
    EXPECT_EQ(call("POST", "/v1/jobs", kAlice, kAliceJob).status, 201);
    cluster.connect("n1");
    cluster.connect("n2");
    const AttemptId attempt = cluster.agents["n1"]->launches().at(0).attempt_id;
    cluster.started("n1", attempt);
    cluster.send("n1", MetricsMsg{attempt, {StepMetric{1, 12345.5, 1.0, 5.0, 1e-3, 100.0, false, std::nullopt}},
                                  {CheckpointReport{987654321, std::string(64, 'a')}}});
    const Reply token = call("POST", "/v1/tokens", kAdmin, R"({"user":"alice"})");
    alices_token = token.body.value("id", "");
    const Reply check = call("POST", "/v1/healthchecks", kAdmin, R"({"nodes":["n2"],"suites":["accelerator"]})");
    EXPECT_EQ(check.status, 202) << check.text;
    setup_check = check.body.value("id", 0);
    EXPECT_EQ(call("POST", "/v1/webhooks", kAlice, kWebhookBody).status, 201);
    store::Change dead_lettered;
    dead_lettered.webhook_deliveries.push_back(
        store::WebhookDelivery{1, 1, 1, 1, store::DeliveryState::dead, 8, cluster.clock.system_now(), std::nullopt});
    cluster.memory.commit(std::span<const store::Change>(&dead_lettered, 1));
  }

  // The audit events the setup above wrote: alice's job, her second token, the health check and
  // her webhook.
  static constexpr std::size_t kSetupChanges = 4;

  std::string secret_of(Caller c) {
    switch (c) {
      case Caller::none: return "";
      case Caller::bad: return "ty_not-a-token";
      case Caller::expired: {
        store::TokenRecord t = new_token_record("expired-secret", "alice", store::Role::admin, cluster.clock.system_now());
        t.expires_at = cluster.clock.system_now();
        tokens.add(t);
        return "expired-secret";
      }
      case Caller::revoked: {
        const Reply made = call("POST", "/v1/tokens", kAdmin, R"({"user":"alice","role":"admin"})");
        EXPECT_EQ(call("DELETE", "/v1/tokens/" + made.body["id"].get<std::string>(), kAdmin).status, 200);
        return made.body["token"];
      }
      case Caller::agent: return kJoin;
      case Caller::viewer: return kViewer;
      case Caller::owner: return kAlice;
      case Caller::other: return kBob;
      case Caller::op: return kOperator;
      case Caller::admin: return kAdmin;
    }
    return "";
  }

  // Calls, answering for the agents any log request the call sent.
  Reply walk(const std::string& method, const std::string& target, const std::string& secret, const std::string& body) {
    auto reply = send(method, target, secret, body);
    cluster.settle();
    for (const auto& request : cluster.agents["n1"]->all<LogRequestMsg>()) {
      if (answered_logs.insert(request.request_id).second) {
        cluster.send("n1", LogReplyMsg{request.request_id, request.attempt_id, "ALICE-LOG-LINE\n", "", 15, false});
      }
    }
    EXPECT_EQ(reply->answers, 1) << method << " " << target << " must be answered exactly once";
    return *reply;
  }

  WebhookRegistry webhooks{{}, 0};
  std::string alices_token;
  std::int64_t setup_check = 0;
  std::set<std::int64_t> answered_logs;
};

// The body of a reply with `id` written as N, so replies about two ids compare.
std::string reply_without_id(const Reply& r, const std::string& id) {
  std::string text = std::to_string(r.status) + " " + r.text;
  for (auto at = text.find(id); at != std::string::npos; at = text.find(id, at)) text.replace(at, id.size(), "N");
  return text;
}

TEST_P(RouteWalkTest, AnswersEachRouteAsThePolicySaysAndLeaksNothingOfAnotherUsersJob) {
  const Caller caller = GetParam();
  const std::string secret = secret_of(caller);
  const bool authenticated = caller >= Caller::viewer;
  std::size_t changes = kSetupChanges + (caller == Caller::revoked ? 2 : 0);
  std::map<std::string, const Route*> table;
  for (const Route& route : api_routes()) table[key_of(route)] = &route;

  for (const auto& [key, c] : cases()) {
    SCOPED_TRACE(key);
    const Route& route = *table.at(key);
    std::string target = c.target;
    if (const auto at = target.find("{alices-token}"); at != std::string::npos) target.replace(at, 14, alices_token);
    if (const auto at = target.find("{setup-check}"); at != std::string::npos) {
      target.replace(at, 13, std::to_string(setup_check));
    }
    const Reply r = walk(std::string(route.method), target, secret, c.body);
    if (route.method != "GET" && r.status / 100 == 2) ++changes;
    const int expected = authenticated ? c.status[static_cast<int>(caller) - static_cast<int>(Caller::viewer)] : c.open;
    EXPECT_EQ(r.status, expected) << r.text;
    // The table's role check and the policy above say the same (daemon/base/roles.h).
    if (authenticated && route.action) {
      const store::Role role = caller == Caller::viewer ? store::Role::viewer
                        : caller == Caller::op   ? store::Role::operator_
                        : caller == Caller::admin ? store::Role::admin
                                                  : store::Role::user;
      if (!allows(role, *route.action)) {
        EXPECT_EQ(r.status, 403) << "the table refuses " << to_string(role);
      }
    }
    if (caller != Caller::other) continue;
    for (const char* secret_text : kAliceSecrets) {
      EXPECT_EQ(r.text.find(secret_text), std::string::npos) << "bob saw \"" << secret_text << "\": " << r.text;
    }
    // Alice's job answers bob exactly as a job that does not exist.
    if (route.pattern.starts_with("/v1/jobs/{id}")) {
      std::string missing = target;
      missing.replace(missing.find("/1"), 2, "/999");
      EXPECT_EQ(reply_without_id(r, "1"),
                reply_without_id(walk(std::string(route.method), missing, secret, c.body), "999"));
    }
  }
  // Exactly the changes that succeeded are audited.
  const Reply log = call("GET", "/v1/audit?limit=1000", kAdmin);
  ASSERT_EQ(log.status, 200) << log.text;
  EXPECT_EQ(log.body["events"].size(), changes) << log.body.dump(1);
}

std::string caller_name(const ::testing::TestParamInfo<Caller>& info) {
  constexpr std::array<const char*, 10> names = {"none",   "bad",   "expired", "revoked",  "agent",
                                                 "viewer", "owner", "other",   "operator", "admin"};
  return names[static_cast<std::size_t>(info.param)];
}

INSTANTIATE_TEST_SUITE_P(EveryCaller, RouteWalkTest, ::testing::ValuesIn(kEveryCaller), caller_name);

}  // namespace
}  // namespace trainyard::daemon::testing
