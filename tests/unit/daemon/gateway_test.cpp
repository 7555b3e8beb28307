// The agent gateway over a fake WebSocket peer: join-token check, hello first, strict parsing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "daemon/gateway.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::testing {
namespace {

using ::testing::HasSubstr;

class FakePeer final : public net::WebSocketPeer {
 public:
  void send(std::string text) override { sent.push_back(parse_daemon_message(text)); }
  void close(std::string reason) override { closed = reason; }
  std::vector<DaemonMessage> sent;
  std::optional<std::string> closed;
};

class GatewayTest : public ::testing::Test {
 protected:
  GatewayTest() : gateway(cluster.jobs, tokens), route(gateway.route()) {
    tokens.add(TokenRecord{sha256_hex("join"), "agent", Role::agent, {}});
    tokens.add(TokenRecord{sha256_hex("alice"), "alice", Role::user, {}});
  }

  std::shared_ptr<net::WebSocketSession> open(std::shared_ptr<FakePeer> peer) {
    net::HttpRequest req;
    req.remote = "127.0.0.1:5555";
    return route.open(req, std::move(peer));
  }

  static std::string hello_text(int protocol = kProtocolVersion) {
    HelloMsg hello;
    hello.protocol = protocol;
    hello.agent_version = "t";
    hello.name = "n1";
    hello.cores = 4;
    hello.data_addr = "127.0.0.1:7000";
    return encode(AgentMessage{hello});
  }

  Cluster cluster;
  TokenRegistry tokens;
  AgentGateway gateway;
  net::WebSocketRoute route;
};

TEST_F(GatewayTest, OnlyTheJoinTokenOpensTheAgentPath) {
  EXPECT_EQ(route.path, "/v1/agent/connect");
  net::HttpRequest req;
  EXPECT_EQ(route.authorize(req)->status, 401);
  req.headers["authorization"] = "Bearer alice";
  EXPECT_EQ(route.authorize(req)->status, 401) << "a user token is not a join token";
  req.headers["authorization"] = "Bearer wrong";
  EXPECT_EQ(route.authorize(req)->status, 401);
  req.headers["authorization"] = "Bearer join";
  EXPECT_FALSE(route.authorize(req));
}

TEST_F(GatewayTest, FirstMessageMustBeAHello) {
  auto peer = std::make_shared<FakePeer>();
  auto session = open(peer);
  session->on_message(encode(AgentMessage{HeartbeatMsg{}}));
  ASSERT_EQ(peer->sent.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<RefusedMsg>(peer->sent[0]));
  EXPECT_THAT(std::get<RefusedMsg>(peer->sent[0]).reason, HasSubstr("first message must be a hello"));
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
  ASSERT_EQ(peer->sent.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<RefusedMsg>(peer->sent[0]));
  EXPECT_THAT(std::get<RefusedMsg>(peer->sent[0]).reason, HasSubstr("protocol version"));
  EXPECT_TRUE(peer->closed);
  EXPECT_TRUE(cluster.jobs.nodes().empty());
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

  // After the hello, garbage and a second hello are dropped without closing.
  session->on_message("not json");
  session->on_message(hello_text());
  EXPECT_EQ(peer->sent.size(), 1u);
  EXPECT_FALSE(peer->closed);

  session->on_closed("peer went away");
  EXPECT_FALSE(cluster.jobs.node("n1")->node.connected);
}

}  // namespace
}  // namespace trainyard::testing
