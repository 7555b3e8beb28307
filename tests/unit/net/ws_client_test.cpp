// WebSocketClient's source address: a client bound to one of 127.0.0.0/8's addresses reaches the
// server from it (the fleet simulator spreads its agents over such addresses), and an address that
// is not an IP is refused before anything is dialled.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <functional>
#include <gtest/gtest.h>
#include <optional>
#include <string>

#include "net/http_server.h"
#include "net/server_list.h"
#include "net/ws_client.h"
#include "proto/errors.h"
#include "tests/unit/net/io_loop.h"

namespace trainyard::net {
namespace {

using namespace std::chrono_literals;

using testing::run_until;
using testing::SilentSession;

TEST(WebSocketClient, ConnectsFromTheSourceAddressItIsGiven) {
  boost::asio::io_context io(1);
  std::optional<std::string> remote;
  WebSocketRoute route{"/agent", [](const HttpRequest&) { return std::nullopt; },
                       [&](const HttpRequest& req, std::shared_ptr<WebSocketPeer>) {
                         remote = req.remote;
                         return std::make_shared<SilentSession>();
                       }};
  HttpServer server(io, HttpServerOptions{}, [](HttpRequest, HttpResponder respond) { respond({}); }, {route});
  const unsigned short port = server.listen("127.0.0.1", 0);
  bool open = false;
  auto client = WebSocketClient::connect(io, "http://127.0.0.1:" + std::to_string(port) + "/agent", {},
                                         {[&] { open = true; }, [](std::string) {}, [](const std::string&) {}},
                                         nullptr, "127.0.0.7");
  ASSERT_TRUE(run_until(io, [&] { return open && remote.has_value(); }));
  EXPECT_EQ(remote->substr(0, remote->find(':')), "127.0.0.7") << *remote;
  client->close("done");
  run_until(io, [&] { return server.websockets_open() == 0; });
}

// A standby daemon refuses the agent's upgrade with a 307: the reason carries where it points, which
// the agent reads back to follow it (net/server_list.h).
TEST(WebSocketClient, ARefusedUpgradeSaysWhereARedirectPoints) {
  boost::asio::io_context io(1);
  WebSocketRoute route{"/agent",
                       [](const HttpRequest&) {
                         return std::optional<HttpResponse>(HttpResponse{
                             .status = 307, .body = R"({"role":"standby"})", .headers = {{"Location", "http://10.0.0.2:8080/agent"}}});
                       },
                       [](const HttpRequest&, std::shared_ptr<WebSocketPeer>) { return std::make_shared<SilentSession>(); }};
  HttpServer server(io, HttpServerOptions{}, [](HttpRequest, HttpResponder respond) { respond({}); }, {route});
  const unsigned short port = server.listen("127.0.0.1", 0);
  std::optional<std::string> reason;
  auto client = WebSocketClient::connect(io, "http://127.0.0.1:" + std::to_string(port) + "/agent", {},
                                         {[] {}, [](std::string) {}, [&](const std::string& why) { reason = why; }});
  ASSERT_TRUE(run_until(io, [&] { return reason.has_value(); }));
  EXPECT_EQ(*reason, R"(HTTP 307 to http://10.0.0.2:8080/agent: {"role":"standby"})");
  const TryOutcome outcome = outcome_of_link_close(*reason);
  EXPECT_EQ(outcome.kind, TryOutcome::Kind::redirected);
  EXPECT_EQ(outcome.location, "http://10.0.0.2:8080/agent");
}

// A frozen daemon's port still accepts TCP connections (the kernel's backlog) but never answers the
// upgrade, and an open link to it never completes a closing handshake: abort ends either at once,
// reporting the caller's reason, and the server sees its end of an open link close.
TEST(WebSocketClient, AbortEndsAnUnansweredUpgradeAndAnOpenLinkAtOnce) {
  boost::asio::io_context io(1);
  boost::asio::ip::tcp::acceptor frozen(io, {boost::asio::ip::make_address("127.0.0.1"), 0});  // never accepts
  std::optional<std::string> closed;
  auto client = WebSocketClient::connect(io, "http://127.0.0.1:" + std::to_string(frozen.local_endpoint().port()) + "/agent",
                                         {}, {[] {}, [](std::string) {}, [&](const std::string& why) { closed = why; }});
  io.run_for(50ms);
  EXPECT_FALSE(closed) << "the upgrade is still waiting";
  client->abort("the daemon answered nothing for 50 ms");
  ASSERT_TRUE(run_until(io, [&] { return closed.has_value(); }));
  EXPECT_EQ(*closed, "the daemon answered nothing for 50 ms");

  struct ClosedSession : WebSocketSession {
    bool& ended;
    explicit ClosedSession(bool& e) : ended(e) {}
    void on_message(std::string) override {}
    void on_closed(const std::string&) override { ended = true; }
  };
  bool server_saw_close = false;
  WebSocketRoute route{"/agent", [](const HttpRequest&) { return std::nullopt; },
                       [&](const HttpRequest&, std::shared_ptr<WebSocketPeer>) {
                         return std::make_shared<ClosedSession>(server_saw_close);
                       }};
  HttpServer server(io, HttpServerOptions{}, [](HttpRequest, HttpResponder respond) { respond({}); }, {route});
  const unsigned short port = server.listen("127.0.0.1", 0);
  bool open = false;
  std::optional<std::string> open_closed;
  auto link = WebSocketClient::connect(io, "http://127.0.0.1:" + std::to_string(port) + "/agent", {},
                                       {[&] { open = true; }, [](std::string) {},
                                        [&](const std::string& why) { open_closed = why; }});
  ASSERT_TRUE(run_until(io, [&] { return open; }));
  link->abort("gone quiet");
  ASSERT_TRUE(run_until(io, [&] { return open_closed.has_value() && server_saw_close; }));
  EXPECT_EQ(*open_closed, "gone quiet");
}

// A server that closes the connection without answering the upgrade (as one over a connection cap
// did) is reported as such: Beast presets a 500 in the response it has not read, and the agent
// logged "HTTP 500" for what no daemon had said.
TEST(WebSocketClient, AnUpgradeClosedUnansweredIsNotReportedAsAnHttpStatus) {
  boost::asio::io_context io(1);
  boost::asio::ip::tcp::acceptor closing(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  boost::asio::ip::tcp::socket accepted(io);
  closing.async_accept(accepted, [&](const boost::system::error_code&) { accepted.close(); });
  std::optional<std::string> closed;
  auto client = WebSocketClient::connect(io, "http://127.0.0.1:" + std::to_string(closing.local_endpoint().port()) + "/agent",
                                         {}, {[] {}, [](std::string) {}, [&](const std::string& why) { closed = why; }});
  ASSERT_TRUE(run_until(io, [&] { return closed.has_value(); }));
  EXPECT_EQ(closed->rfind("the upgrade got no answer: ", 0), 0u) << *closed;
  EXPECT_EQ(outcome_of_link_close(*closed).kind, TryOutcome::Kind::unreachable);
}

// A refusal for a cap carries its Retry-After to the agent, which waits that long.
TEST(WebSocketClient, ARefusedUpgradeCarriesItsRetryAfter) {
  boost::asio::io_context io(1);
  WebSocketRoute route{"/agent",
                       [](const HttpRequest&) -> std::optional<HttpResponse> {
                         HttpResponse busy = error_response(429, "too_many_connections", "come back later");
                         busy.headers.emplace_back("Retry-After", "4");
                         return busy;
                       },
                       [](const HttpRequest&, std::shared_ptr<WebSocketPeer>) { return std::make_shared<SilentSession>(); }};
  HttpServer server(io, HttpServerOptions{}, [](HttpRequest, HttpResponder respond) { respond({}); }, {route});
  const unsigned short port = server.listen("127.0.0.1", 0);
  std::optional<std::string> closed;
  auto client = WebSocketClient::connect(io, "http://127.0.0.1:" + std::to_string(port) + "/agent", {},
                                         {[] {}, [](std::string) {}, [&](const std::string& why) { closed = why; }});
  ASSERT_TRUE(run_until(io, [&] { return closed.has_value(); }));
  EXPECT_EQ(closed->rfind("HTTP 429 (retry after 4 s): ", 0), 0u) << *closed;
  EXPECT_EQ(retry_after_of_link_close(*closed), std::chrono::seconds(4));
}

TEST(WebSocketClient, RefusesASourceAddressThatIsNotAnIp) {
  boost::asio::io_context io(1);
  try {
    WebSocketClient::connect(io, "http://127.0.0.1:1/agent", {}, {}, nullptr, "localhost");
    FAIL() << "accepted a host name as the source address";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "local address");
  }
}

}  // namespace
}  // namespace trainyard::net
