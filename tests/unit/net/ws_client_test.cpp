// WebSocketClient's source address: a client bound to one of 127.0.0.0/8's addresses reaches the
// server from it (the fleet simulator spreads its agents over such addresses), and an address that
// is not an IP is refused before anything is dialled.
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <gtest/gtest.h>
#include <optional>
#include <string>

#include "net/http_server.h"
#include "net/server_list.h"
#include "net/ws_client.h"
#include "proto/errors.h"

namespace trainyard::net {
namespace {

using namespace std::chrono_literals;

bool run_until(boost::asio::io_context& io, const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    io.run_for(5ms);
  }
  return true;
}

struct SilentSession : WebSocketSession {
  void on_message(std::string) override {}
  void on_closed(const std::string&) override {}
};

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
