// The agent gateway over a fake WebSocket peer: agent tokens only, each node's own credential,
// hello first, strict parsing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/gateway.h"
#include "daemon/nodes/node_credentials.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::daemon::testing {
namespace {

using ::testing::HasSubstr;

class FakePeer final : public net::WebSocketPeer {
 public:
  void send(std::string text) override { sent.push_back(parse_daemon_message(text)); }
  void close(std::string reason) override { closed = reason; }
  void abort(std::string reason) override { closed = reason; }
  std::vector<DaemonMessage> sent;
  std::optional<std::string> closed;
};

class GatewayTest : public ::testing::Test {
 protected:
  GatewayTest() : gateway(cluster.jobs, tokens, cluster.worker, cluster.clock), route(gateway.route()) {
    tokens.add(new_token_record("join", "agent", store::Role::agent, {}));
    tokens.add(new_token_record("alice", "alice", store::Role::user, {}));
    tokens.add(new_token_record("root", "admin", store::Role::admin, {}));
  }

  std::shared_ptr<net::WebSocketSession> open(std::shared_ptr<FakePeer> peer, const std::string& token = "join") {
    net::HttpRequest req;
    req.remote = "127.0.0.1:5555";
    req.headers["authorization"] = "Bearer " + token;
    return route.open(req, std::move(peer));
  }

  // A connection with `token` that says hello as `node`; settled, so a new credential is stored.
  std::shared_ptr<FakePeer> join(const std::string& node, const std::string& token = "join",
                                 std::vector<AttemptReport> running = {}) {
    auto peer = std::make_shared<FakePeer>();
    sessions.push_back(open(peer, token));
    sessions.back()->on_message(hello_text(kProtocolVersion, node, std::move(running)));
    cluster.settle();
    return peer;
  }
  static std::optional<WelcomeMsg> welcome_of(const FakePeer& peer) {
    for (const auto& m : peer.sent) {
      if (const auto* w = std::get_if<WelcomeMsg>(&m)) return *w;
    }
    return std::nullopt;
  }
  static std::string refusal_of(const FakePeer& peer) {
    for (const auto& m : peer.sent) {
      if (const auto* r = std::get_if<RefusedMsg>(&m)) return r->reason;
    }
    return "";
  }

  static std::string hello_text(int protocol = kProtocolVersion, const std::string& name = "n1",
                                std::vector<AttemptReport> running = {}) {
    HelloMsg hello;
    hello.protocol = protocol;
    hello.agent_version = "t";
    hello.name = name;
    hello.attempts = std::move(running);
    hello.cores = 4;
    hello.data_addr = "127.0.0.1:7000";
    return encode(AgentMessage{hello});
  }

  Cluster cluster;
  TokenRegistry tokens;
  AgentGateway gateway;
  net::WebSocketRoute route;
  std::vector<std::shared_ptr<net::WebSocketSession>> sessions;
};

TEST_F(GatewayTest, OnlyAgentTokensOpenTheAgentPath) {
  EXPECT_EQ(route.path, "/v1/agent/connect");
  net::HttpRequest req;
  EXPECT_EQ(route.authorize(req)->status, 401);
  req.headers["authorization"] = "Bearer alice";
  EXPECT_EQ(route.authorize(req)->status, 401) << "a user token is not a join token";
  req.headers["authorization"] = "Bearer root";
  EXPECT_EQ(route.authorize(req)->status, 401) << "the admin token is no way to become a node";
  req.headers["authorization"] = "Bearer wrong";
  EXPECT_EQ(route.authorize(req)->status, 401);
  req.headers["authorization"] = "Bearer join";
  EXPECT_FALSE(route.authorize(req));
}

TEST_F(GatewayTest, AFirstJoinGetsACredentialBoundToTheNodeName) {
  auto peer = join("n1");
  const auto welcome = welcome_of(*peer);
  ASSERT_TRUE(welcome);
  ASSERT_FALSE(welcome->node_credential.empty()) << "the first join is given the node's own credential";
  const auto who = tokens.authenticate(welcome->node_credential, cluster.clock.system_now());
  ASSERT_TRUE(who);
  EXPECT_EQ(who->role, store::Role::agent);
  EXPECT_EQ(who->bound_node(), "n1");
  const auto stored = cluster.memory.tokens();
  EXPECT_TRUE(std::any_of(stored.begin(), stored.end(), [&](const store::TokenRecord& t) {
    return t.hash == sha256_hex(welcome->node_credential) && t.user == node_token_user("n1");
  })) << "the credential is stored (hashed) before the welcome carries it";

  // The node reconnects with it: welcomed, no new credential, and the connection is the node's.
  auto again = join("n1", welcome->node_credential);
  ASSERT_TRUE(welcome_of(*again));
  EXPECT_EQ(welcome_of(*again)->node_credential, "");
  EXPECT_TRUE(peer->closed) << "the node's new connection replaces its old one";
}

TEST_F(GatewayTest, TheJoinTokenCannotTakeTheNameOfANodeThatHasACredential) {
  auto real = join("n1");
  ASSERT_TRUE(welcome_of(*real));
  auto forged = join("n1");
  EXPECT_FALSE(welcome_of(*forged));
  EXPECT_THAT(refusal_of(*forged), HasSubstr("node n1 already has its own credential"));
  EXPECT_TRUE(forged->closed);
  EXPECT_FALSE(real->closed) << "the real node keeps its connection";
  EXPECT_TRUE(cluster.jobs.node("n1")->node.connected);

  // What the forged connection says after its refusal reaches nothing, not even another hello.
  sessions.back()->on_message(encode(AgentMessage{AttemptExitedMsg{1, 0, std::nullopt, "forged", 5, ""}}));
  sessions.back()->on_message(hello_text(kProtocolVersion, "n9"));
  cluster.settle();
  EXPECT_TRUE(cluster.jobs.node("n1")->node.connected);
  EXPECT_FALSE(cluster.jobs.node("n9"));
}

TEST_F(GatewayTest, ANodeCredentialSpeaksOnlyForItsOwnNode) {
  const std::string n1_secret = welcome_of(*join("n1"))->node_credential;
  auto as_n2 = join("n2", n1_secret);
  EXPECT_THAT(refusal_of(*as_n2), HasSubstr("belongs to node n1, not to node n2"));
  EXPECT_FALSE(cluster.jobs.node("n2")) << "no node was registered by the refused hello";
}

TEST_F(GatewayTest, AForgottenCredentialLetsTheJoinTokenRegisterTheNameAgain) {
  const std::string old_secret = welcome_of(*join("n1"))->node_credential;
  sessions.back()->on_closed("machine reinstalled");
  bool forgotten = false;
  forget_node_credential(tokens, cluster.worker, "n1", "test",
                         [&](const Result<void>& done) { forgotten = done.ok(); });
  cluster.settle();
  ASSERT_TRUE(forgotten);
  EXPECT_FALSE(tokens.authenticate(old_secret, cluster.clock.system_now())) << "the old credential opens nothing";
  auto reinstalled = join("n1");
  ASSERT_TRUE(welcome_of(*reinstalled));
  EXPECT_NE(welcome_of(*reinstalled)->node_credential, "");
  EXPECT_NE(welcome_of(*reinstalled)->node_credential, old_secret);
}

TEST_F(GatewayTest, ACredentialThatCouldNotBeDeliveredIsWithdrawn) {
  auto peer = std::make_shared<FakePeer>();
  auto session = open(peer);
  session->on_message(hello_text());
  session->on_closed("gone before the welcome");  // while the credential is being stored
  cluster.settle();
  EXPECT_FALSE(tokens.node_credential("n1")) << "nobody holds the secret, so nobody may own the name";
  EXPECT_TRUE(welcome_of(*join("n1")));
}

TEST_F(GatewayTest, RevokingANodeCredentialClosesTheConnectionItOpened) {
  const std::string secret = welcome_of(*join("n1"))->node_credential;
  auto n1 = join("n1", secret);
  auto n2 = join("n2");
  ASSERT_TRUE(welcome_of(*n1));
  ASSERT_FALSE(n1->closed);
  tokens.remove(sha256_hex(secret));
  ASSERT_TRUE(n1->closed) << "an agent kept its connection after its credential was revoked";
  EXPECT_THAT(*n1->closed, HasSubstr("was revoked"));
  EXPECT_FALSE(n2->closed) << "another node's connection is not its business";
  // n2 still speaks on the connection it opened with the join token: its credential is what counts.
  tokens.remove(sha256_hex(welcome_of(*n2)->node_credential));
  EXPECT_TRUE(n2->closed) << "a node joined with the join token kept its connection after its credential was revoked";
  EXPECT_EQ(route.authorize([&] {
              net::HttpRequest req;
              req.headers["authorization"] = "Bearer " + secret;
              return req;
            }())->status,
            401);
}

TEST_F(GatewayTest, ReplacingTheJoinTokenLeavesJoinedNodesButClosesConnectionsNotJoinedYet) {
  auto joined = join("n1");
  ASSERT_TRUE(welcome_of(*joined));
  auto waiting = std::make_shared<FakePeer>();
  sessions.push_back(open(waiting));  // no hello yet
  tokens.remove(sha256_hex("join"));
  EXPECT_FALSE(joined->closed) << "a node that joined holds its own credential; rotation must not disturb it";
  EXPECT_TRUE(waiting->closed) << "a connection that has not joined has nothing but the revoked join token";
}

TEST_F(GatewayTest, FirstMessageMustBeAHello) {
  auto peer = std::make_shared<FakePeer>();
  auto session = open(peer);
  session->on_message(encode(AgentMessage{HeartbeatMsg{}}));
  ASSERT_EQ(peer->sent.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<RefusedMsg>(peer->sent[0]));
  EXPECT_THAT(std::get<RefusedMsg>(peer->sent[0]).reason, HasSubstr("first message must be a hello or attempts_stopped"));
  EXPECT_TRUE(peer->closed);
  EXPECT_TRUE(cluster.jobs.nodes().empty());
}

TEST_F(GatewayTest, MalformedFirstMessageIsRefusedWithTheReason) {
  auto peer = std::make_shared<FakePeer>();
  auto session = open(peer);
  session->on_message(R"({"type":"hello","protocol":"one"})");
  ASSERT_EQ(peer->sent.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<RefusedMsg>(peer->sent[0]));
  EXPECT_THAT(std::get<RefusedMsg>(peer->sent[0]).reason, HasSubstr("malformed message"));
  EXPECT_TRUE(peer->closed);
}

TEST_F(GatewayTest, IncompatibleProtocolIsRefused) {
  auto peer = std::make_shared<FakePeer>();
  auto session = open(peer);
  session->on_message(hello_text(kProtocolVersion + 1));
  cluster.settle();
  ASSERT_EQ(peer->sent.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<RefusedMsg>(peer->sent[0]));
  EXPECT_THAT(std::get<RefusedMsg>(peer->sent[0]).reason, HasSubstr("protocol version"));
  EXPECT_TRUE(peer->closed);
  EXPECT_TRUE(cluster.jobs.nodes().empty());
  EXPECT_FALSE(tokens.node_credential("n1")) << "a refused node keeps no credential";
}

// A dead agent's fence keeper reports what it stopped, and the daemon loses those ranks at once:
// so only the node's own credential may say it, for its own node.
TEST_F(GatewayTest, OnlyANodesOwnCredentialReportsItsAttemptsStopped) {
  const std::string n1_secret = welcome_of(*join("n1"))->node_credential;
  const std::string n2_secret = welcome_of(*join("n2"))->node_credential;
  const auto report = [&](const std::string& token, const std::string& node, int protocol = kProtocolVersion) {
    auto peer = std::make_shared<FakePeer>();
    sessions.push_back(open(peer, token));
    sessions.back()->on_message(encode(AgentMessage{AttemptsStoppedMsg{protocol, node, {41}}}));
    cluster.settle();
    EXPECT_TRUE(peer->closed) << "a report is the only message of its connection";
    return peer;
  };
  EXPECT_THAT(refusal_of(*report(n2_secret, "n1")), HasSubstr("this credential belongs to node n2, not to node n1"));
  EXPECT_THAT(refusal_of(*report("join", "n1")), HasSubstr("only node n1's own credential"));
  EXPECT_THAT(refusal_of(*report("join", "n3")), HasSubstr("only node n3's own credential"))
      << "nor for a name that has no credential yet";
  EXPECT_THAT(refusal_of(*report(n1_secret, "n1", kProtocolVersion - 1)), HasSubstr("protocol version"));

  auto taken = report(n1_secret, "n1");
  ASSERT_EQ(taken->sent.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<StopNotedMsg>(taken->sent[0]));
}

TEST_F(GatewayTest, AStopReportOnAnAgentsLinkIsIgnored) {
  auto peer = join("n1");
  sessions.back()->on_message(encode(AgentMessage{AttemptsStoppedMsg{kProtocolVersion, "n1", {41}}}));
  cluster.settle();
  EXPECT_FALSE(peer->closed);
  EXPECT_EQ(peer->sent.size(), 1u) << "the welcome only";
}

TEST_F(GatewayTest, AcceptedAgentIsWelcomedAndItsCloseIsReported) {
  auto peer = std::make_shared<FakePeer>();
  auto session = open(peer);
  session->on_message(hello_text());
  cluster.settle();
  ASSERT_EQ(peer->sent.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<WelcomeMsg>(peer->sent[0]));
  EXPECT_FALSE(peer->closed);
  ASSERT_TRUE(cluster.jobs.node("n1"));
  EXPECT_TRUE(cluster.jobs.node("n1")->node.connected);

  // After the hello, a second hello is dropped without closing.
  session->on_message(hello_text());
  EXPECT_EQ(peer->sent.size(), 1u);
  EXPECT_FALSE(peer->closed);

  session->on_closed("peer went away");
  EXPECT_FALSE(cluster.jobs.node("n1")->node.connected);
}

// A message that does not parse, at any stage, is forged or broken: the connection is refused
// (deep nesting is refused by the reader before anything is built from it).
TEST_F(GatewayTest, AMalformedMessageAfterTheHelloClosesTheConnection) {
  auto peer = std::make_shared<FakePeer>();
  auto session = open(peer);
  session->on_message(hello_text());
  cluster.settle();
  ASSERT_EQ(peer->sent.size(), 1u);
  session->on_message(R"({"type":"heartbeat","attempts":)" + std::string(100, '[') + std::string(100, ']') + "}");
  ASSERT_EQ(peer->sent.size(), 2u);
  const auto* refused = std::get_if<RefusedMsg>(&peer->sent[1]);
  ASSERT_NE(refused, nullptr);
  EXPECT_NE(refused->reason.find("nested deeper than 64 levels"), std::string::npos) << refused->reason;
  EXPECT_TRUE(peer->closed);
}

// Its own close takes a session out of the gateway's list, whoever still holds it: the list no
// longer waits for the session to be freed and a later connection to prune it.
TEST_F(GatewayTest, AClosedConnectionLeavesTheGatewayAsItCloses) {
  auto first = open(std::make_shared<FakePeer>());
  auto second = open(std::make_shared<FakePeer>());
  first->on_message(hello_text(kProtocolVersion, "n1"));
  cluster.settle();
  EXPECT_EQ(gateway.open_sessions(), 2u);

  first->on_closed("peer went away");
  EXPECT_EQ(gateway.open_sessions(), 1u);
  second->on_closed("peer went away");
  EXPECT_EQ(gateway.open_sessions(), 0u);

  // Revocations still reach the connections that stay open.
  auto peer = join("n2");
  ASSERT_TRUE(welcome_of(*peer));
  EXPECT_EQ(gateway.open_sessions(), 1u);
  tokens.remove(sha256_hex(welcome_of(*peer)->node_credential));
  EXPECT_TRUE(peer->closed);
}

// Mutual TLS (--agent-client-ca): the server hands the gateway what the agent presented.
TEST_F(GatewayTest, WithClientCertificatesRequiredAnAgentMustPresentOneNamingItsNode) {
  AgentGateway mtls(cluster.jobs, tokens, cluster.worker, cluster.clock, /*require_client_certificate=*/true);
  const net::WebSocketRoute mtls_route = mtls.route();
  net::HttpRequest req;
  req.remote = "127.0.0.1:5555";  // where the hello's data address is
  req.headers["authorization"] = "Bearer join";
  ASSERT_TRUE(mtls_route.authorize(req)) << "no certificate at all";
  EXPECT_EQ(mtls_route.authorize(req)->status, 403);
  EXPECT_THAT(mtls_route.authorize(req)->body, HasSubstr("no client certificate"));
  req.peer_certificate = net::PeerCertificate{false, "unable to get local issuer certificate", "n1", {"n1"}};
  ASSERT_TRUE(mtls_route.authorize(req)) << "a certificate from another CA";
  EXPECT_THAT(mtls_route.authorize(req)->body, HasSubstr("unable to get local issuer certificate"));
  req.peer_certificate = net::PeerCertificate{true, "", "n1", {"n1"}};
  EXPECT_FALSE(mtls_route.authorize(req));

  auto impostor = std::make_shared<FakePeer>();
  auto session = mtls_route.open(req, impostor);
  session->on_message(hello_text(kProtocolVersion, "n2"));
  cluster.settle();
  EXPECT_THAT(refusal_of(*impostor), HasSubstr("not issued to node n2"));
  EXPECT_TRUE(impostor->closed);
  EXPECT_FALSE(cluster.jobs.node("n2"));

  auto agent = std::make_shared<FakePeer>();
  auto accepted = mtls_route.open(req, agent);
  accepted->on_message(hello_text(kProtocolVersion, "n1"));
  cluster.settle();
  EXPECT_TRUE(welcome_of(*agent));
}

}  // namespace
}  // namespace trainyard::daemon::testing
