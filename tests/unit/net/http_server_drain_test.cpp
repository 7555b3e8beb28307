// The server's half of a graceful shutdown, on loopback: after stop_accepting() new connections
// are refused and idle ones closed, while a request being handled is still answered (then the
// connection closes). The io_context runs on the test's thread, a step at a time.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <chrono>
#include <functional>
#include <gtest/gtest.h>
#include <optional>
#include <string>

#include "net/http_server.h"
#include "net/ws_client.h"
#include "tests/unit/net/io_loop.h"
#include "tests/unit/net/loopback_client.h"

namespace trainyard::net {
namespace {

using namespace std::chrono_literals;

using testing::run_until;
using testing::SilentSession;

using Client = testing::LoopbackClient;

TEST(HttpServerDrain, RefusesNewConnectionsClosesIdleOnesAndAnswersTheRequestInFlight) {
  boost::asio::io_context io(1);
  std::optional<HttpResponder> held;
  HttpServer server(io, HttpServerOptions{},
                    [&](HttpRequest req, HttpResponder respond) {
                      if (req.path == "/slow") {
                        held = std::move(respond);
                      } else {
                        respond(HttpResponse{200, "text/plain", "fast", {}});
                      }
                    },
                    {});
  const unsigned short port = server.listen("127.0.0.1", 0);

  Client idle(port);
  ASSERT_TRUE(idle.send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(run_until(io, [&] {
    idle.poll();
    return idle.received.find("fast") != std::string::npos;
  }));
  Client busy(port);
  ASSERT_TRUE(busy.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(run_until(io, [&] { return held.has_value(); }));
  EXPECT_EQ(server.requests_in_flight(), 1u);

  EXPECT_EQ(server.stop_accepting(), 1u) << "the idle keep-alive connection";
  EXPECT_EQ(Client(port).connect_errno, ECONNREFUSED);
  EXPECT_TRUE(run_until(io, [&] {
    idle.poll();
    return idle.closed;
  }));

  (*held)(HttpResponse{200, "text/plain", "slow answer", {}});
  ASSERT_TRUE(run_until(io, [&] {
    busy.poll();
    return busy.closed;
  }));
  EXPECT_NE(busy.received.find("slow answer"), std::string::npos) << busy.received;
  EXPECT_NE(busy.received.find("Connection: close"), std::string::npos) << busy.received;
  EXPECT_EQ(server.requests_in_flight(), 0u);
}

TEST(HttpServerDrain, TellsWebSocketPeersItIsGoingAwayWithCode1001AndTheReason) {
  boost::asio::io_context io(1);
  WebSocketRoute route{
      "/agent", [](const HttpRequest&) { return std::nullopt; },
      [](const HttpRequest&, std::shared_ptr<WebSocketPeer>) { return std::make_shared<SilentSession>(); }};
  HttpServer server(io, HttpServerOptions{}, [](HttpRequest, HttpResponder respond) { respond({}); }, {route});
  const unsigned short port = server.listen("127.0.0.1", 0);
  bool open = false;
  std::optional<std::string> closed;
  auto client = WebSocketClient::connect(
      io, "http://127.0.0.1:" + std::to_string(port) + "/agent", {},
      {[&] { open = true; }, [](std::string) {}, [&](const std::string& reason) { closed = reason; }});
  ASSERT_TRUE(run_until(io, [&] { return open && server.websockets_open() == 1; }));

  server.stop_accepting();
  EXPECT_EQ(server.websockets_open(), 1u) << "WebSockets outlive stop_accepting: answers may wait on an agent";
  EXPECT_EQ(server.tell_websockets_going_away("daemon shutting down"), 1u);
  ASSERT_TRUE(run_until(io, [&] { return closed.has_value() && server.websockets_open() == 0; }));
  EXPECT_EQ(*closed, "closed by server with code 1001 (going away): daemon shutting down");
}

}  // namespace
}  // namespace trainyard::net
