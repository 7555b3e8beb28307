// Who gets a connection and which requests are read, on loopback: the connection caps give way to
// authenticated callers, a silent connection goes the header timeout after its accept, a refusal
// is a status with Retry-After, and a request whose framing or credentials are ambiguous is
// answered 400 and its connection closed. The io_context runs on the test's thread, a step at a time.
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "net/http_server.h"
#include "tests/unit/net/io_loop.h"
#include "tests/unit/net/loopback_client.h"

namespace trainyard::net {
namespace {

using namespace std::chrono_literals;
using testing::run_until;

using Client = testing::LoopbackClient;

std::string get_as(const std::string& token = "") {
  return "GET /x HTTP/1.1\r\nHost: d\r\n" + (token.empty() ? "" : "Authorization: Bearer " + token + "\r\n") + "\r\n";
}

// A server whose callers are named by their token: "agent" is an agent, any other a user of that name.
struct Served {
  explicit Served(HttpServerOptions options)
      : server(io, options, [this](HttpRequest req, HttpResponder respond) {
          if (req.path == "/held") {
            held.push_back(std::move(respond));
            return;
          }
          respond(HttpResponse{200, "text/plain", "served", {}});
        }, {}) {
    server.identify_callers([](std::string_view authorization) -> std::optional<Caller> {
      if (!authorization.starts_with("Bearer ")) return std::nullopt;
      const std::string token(authorization.substr(7));
      return Caller{token, token == "agent"};
    });
    port = server.listen("127.0.0.1", 0);
  }
  // Sends `request` on `client` and runs until it is answered (or the connection closed).
  bool answered(Client& client, const std::string& request) {
    const std::size_t before = client.answers();
    if (!client.send(request)) return false;
    return run_until(io, [&] {
      client.poll();
      return client.answers() > before || client.closed;
    }) && client.answers() > before;
  }
  boost::asio::io_context io{1};
  std::vector<HttpResponder> held;
  HttpServer server;
  unsigned short port = 0;
};

HttpServerOptions with_caps(std::size_t per_address, std::size_t per_caller) {
  HttpServerOptions options;
  options.caps.per_address = per_address;
  options.caps.per_caller = per_caller;
  return options;
}

TEST(HttpServerDoors, ASilentConnectionIsClosedTheHeaderTimeoutAfterItsAccept) {
  HttpServerOptions options;
  options.header_timeout = 200ms;  // the idle timeout stays at a minute
  Served served(options);
  Client silent(served.port);
  const auto accepted = std::chrono::steady_clock::now();
  ASSERT_TRUE(run_until(served.io, [&] {
    silent.poll();
    return silent.closed;
  })) << "a connection that never sent a byte was kept for the idle timeout";
  EXPECT_LT(std::chrono::steady_clock::now() - accepted, 2s);
}

// A job on a node holds every unauthenticated connection its address may have; the node's agent
// (and an admin) connect from the same address.
TEST(HttpServerDoors, AnAddressAtItsCapMakesRoomForAnAuthenticatedCallerByClosingItsOldestSilentConnection) {
  Served served(with_caps(3, 100));
  std::vector<std::unique_ptr<Client>> hog;
  for (int i = 0; i < 3; ++i) {
    hog.push_back(std::make_unique<Client>(served.port));
    ASSERT_TRUE(served.answered(*hog.back(), get_as())) << "hog connection " << i;  // then idle, kept alive
  }
  Client agent(served.port);
  ASSERT_TRUE(served.answered(agent, get_as("agent"))) << "the agent was locked out by the hog's connections";
  ASSERT_TRUE(run_until(served.io, [&] {
    hog[0]->poll();
    return hog[0]->closed;
  })) << "the oldest silent connection gave way";
  // The hog reopens, again and again: the agent's authenticated connection is never the one to go.
  for (int i = 0; i < 6; ++i) {
    hog.push_back(std::make_unique<Client>(served.port));
    ASSERT_TRUE(served.answered(*hog.back(), get_as())) << "reopened hog connection " << i;
  }
  EXPECT_TRUE(served.answered(agent, get_as("agent")));
  Client admin(served.port);
  EXPECT_TRUE(served.answered(admin, get_as("root")));
  agent.poll();
  EXPECT_FALSE(agent.closed);
}

TEST(HttpServerDoors, ACallerOverItsOwnCapIsAnswered429WithRetryAfterAndOthersAreNot) {
  Served served(with_caps(100, 1));
  Client first(served.port);
  ASSERT_TRUE(served.answered(first, get_as("alice")));
  Client second(served.port);
  ASSERT_TRUE(served.answered(second, get_as("alice")));
  EXPECT_NE(second.received.find("HTTP/1.1 429"), std::string::npos) << second.received;
  EXPECT_NE(second.received.find("Retry-After: 1\r\n"), std::string::npos) << second.received;
  EXPECT_NE(second.received.find("--max-connections-per-user"), std::string::npos) << second.received;
  EXPECT_TRUE(run_until(served.io, [&] {
    second.poll();
    return second.closed;
  }));
  Client bob(served.port);
  ASSERT_TRUE(served.answered(bob, get_as("bob")));
  EXPECT_NE(bob.received.find("200 OK"), std::string::npos) << bob.received;
}

TEST(HttpServerDoors, AConnectionRefusedAtItsAcceptIsToldWhyAndWhenToComeBack) {
  Served served(with_caps(1, 100));
  Client busy(served.port);
  ASSERT_TRUE(busy.send("GET /held HTTP/1.1\r\nHost: d\r\n\r\n"));
  ASSERT_TRUE(run_until(served.io, [&] { return served.held.size() == 1; }));
  Client refused(served.port);  // nothing of its address is waiting silently: nothing gives way
  ASSERT_TRUE(run_until(served.io, [&] {
    refused.poll();
    return refused.closed;
  }));
  EXPECT_NE(refused.received.find("HTTP/1.1 429"), std::string::npos) << "closed without a word: " << refused.received;
  EXPECT_NE(refused.received.find("Retry-After: 1\r\n"), std::string::npos) << refused.received;
}

TEST(HttpServerDoors, AmbiguousCredentialsOrFramingAre400AndTheConnectionIsClosed) {
  Served served(HttpServerOptions{});
  const std::vector<std::pair<std::string, std::string>> requests = {
      {"two Authorization fields",
       "GET /x HTTP/1.1\r\nHost: d\r\nAuthorization: Bearer alice\r\nAuthorization: Bearer root\r\n\r\n"},
      {"xchunked beside a length",
       "POST /x HTTP/1.1\r\nHost: d\r\nTransfer-Encoding: xchunked\r\nContent-Length: 5\r\n\r\nhello"},
      {"a coding before chunked", "POST /x HTTP/1.1\r\nHost: d\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"},
      {"chunked beside a length",
       "POST /x HTTP/1.1\r\nHost: d\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
  };
  for (const auto& [what, request] : requests) {
    Client client(served.port);
    // What a proxy in front might have read as a second request must not be served either.
    ASSERT_TRUE(client.send(request + get_as()));
    ASSERT_TRUE(run_until(served.io, [&] {
      client.poll();
      return client.closed;
    })) << what << ": the connection was kept";
    EXPECT_EQ(client.received.rfind("HTTP/1.1 400", 0), 0u) << what << ": " << client.received;
    EXPECT_EQ(client.answers(), 1u) << what << ": " << client.received;
    EXPECT_EQ(client.received.find("served"), std::string::npos) << what << ": " << client.received;
  }
  Client chunked(served.port);
  EXPECT_TRUE(served.answered(chunked, "POST /x HTTP/1.1\r\nHost: d\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"));
  EXPECT_NE(chunked.received.find("200 OK"), std::string::npos) << chunked.received;
}

TEST(RequestFields, NameTheFieldThatMayNotBeRepeatedOrMayNotFrameTheBody) {
  EXPECT_TRUE(check_request_fields({{"Host", "d"}, {"Authorization", "Bearer a"}, {"Content-Length", "3"}}));
  EXPECT_TRUE(check_request_fields({{"Transfer-Encoding", "Chunked"}}));
  const auto field_of = [](const HeaderFields& fields) {
    const Result<void> checked = check_request_fields(fields);
    return checked ? std::string("accepted") : checked.error().field;
  };
  EXPECT_EQ(field_of({{"authorization", "Bearer a"}, {"Authorization", "Bearer b"}}), "authorization");
  EXPECT_EQ(field_of({{"Host", "a"}, {"host", "b"}}), "host");
  EXPECT_EQ(field_of({{"Transfer-Encoding", "xchunked"}}), "transfer-encoding");
  EXPECT_EQ(field_of({{"Transfer-Encoding", "chunked, chunked"}}), "transfer-encoding");
  EXPECT_EQ(field_of({{"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "chunked"}}), "transfer-encoding");
  EXPECT_EQ(field_of({{"Transfer-Encoding", "chunked"}, {"Content-Length", "0"}}), "transfer-encoding");
}

}  // namespace
}  // namespace trainyard::net
