// The HTTP server's connection handling over Beast's in-memory stream (net/http_server_testing.h):
// what a client sends is appended whole, the client's end-of-file follows it, and the io_context
// runs until the connection has ended, so every test is deterministic and needs no socket. The
// fail_count makes the n-th read or write fail, to walk a failure through every I/O step.
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/_experimental/test/fail_count.hpp>
#include <boost/beast/_experimental/test/stream.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <chrono>
#include <gtest/gtest.h>
#include <optional>
#include <string>
#include <vector>

#include "net/http_server.h"
#include "net/http_server_testing.h"

namespace trainyard::net {
namespace {

namespace test = boost::beast::test;

struct Exchange {
  std::string received;            // what the server wrote
  std::vector<std::string> served;  // the targets the handler saw, in order
  std::size_t in_flight_after = 0;  // the server's count once the connection ended
};

// Serves `sent` (the client then closes its sending side) and collects the answer. `fail` makes
// the server's n-th I/O operation fail; `read_size` caps the bytes each read returns.
Exchange serve(const std::string& sent, HttpServerOptions options = {}, std::optional<std::size_t> fail = std::nullopt,
               std::size_t read_size = 0) {
  boost::asio::io_context io(1);
  Exchange exchange;
  HttpServer server(io, options,
                    [&](HttpRequest req, HttpResponder respond) {
                      exchange.served.push_back(req.target);
                      respond(HttpResponse{200, "text/plain", req.method + " " + req.target + " " + req.body, {}});
                    },
                    {});
  test::fail_count count(fail.value_or(1'000'000));
  InMemoryStream server_end(io, count);
  test::stream client(io);
  server_end.connect(client);
  if (read_size != 0) server_end.read_size(read_size);
  server_end.append(sent);
  server_end.close_remote();
  HttpServerTesting::serve(server, std::move(server_end));
  io.run();
  exchange.received = client.str();
  exchange.in_flight_after = server.requests_in_flight();
  return exchange;
}

std::string get(const std::string& target, const std::string& extra_headers = "") {
  return "GET " + target + " HTTP/1.1\r\nHost: t\r\n" + extra_headers + "\r\n";
}

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(HttpServerStream, KeepAliveAnswersPipelinedRequestsInOrderOnOneConnection) {
  const Exchange e = serve(get("/a") + get("/b") + "POST /c HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nxyz");
  EXPECT_EQ(e.served, (std::vector<std::string>{"/a", "/b", "/c"}));
  const auto a = e.received.find("GET /a ");
  const auto b = e.received.find("GET /b ");
  const auto c = e.received.find("POST /c xyz");
  ASSERT_NE(c, std::string::npos) << e.received;
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_EQ(count_of(e.received, "HTTP/1.1 200 OK"), 3u);
  EXPECT_EQ(e.received.find("Connection: close"), std::string::npos) << e.received;
}

TEST(HttpServerStream, ARequestArrivingAByteAtATimeIsReadWhole) {
  const Exchange e = serve("POST /v1/jobs HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello", {}, std::nullopt, 1);
  EXPECT_EQ(e.served, std::vector<std::string>{"/v1/jobs"});
  EXPECT_NE(e.received.find("POST /v1/jobs hello"), std::string::npos) << e.received;
}

TEST(HttpServerStream, ConnectionCloseAndHttp10EndTheConnectionAfterTheirAnswer) {
  const Exchange closing = serve(get("/a", "Connection: close\r\n") + get("/b"));
  EXPECT_EQ(closing.served, std::vector<std::string>{"/a"});
  EXPECT_NE(closing.received.find("Connection: close"), std::string::npos) << closing.received;

  const Exchange old = serve("GET /a HTTP/1.0\r\n\r\n" + get("/b"));
  EXPECT_EQ(old.served, std::vector<std::string>{"/a"});
  EXPECT_EQ(old.received.rfind("HTTP/1.0 200 OK", 0), 0u) << old.received;

  const Exchange kept = serve("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + get("/b"));
  EXPECT_EQ(kept.served, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_NE(kept.received.find("Connection: keep-alive"), std::string::npos) << kept.received;
}

TEST(HttpServerStream, AnOversizedHeaderIsRefusedWith431) {
  HttpServerOptions options;
  options.header_limit = 1024;
  const Exchange e = serve(get("/a", "X-Big: " + std::string(2000, 'x') + "\r\n") + get("/b"), options);
  EXPECT_TRUE(e.served.empty());
  EXPECT_EQ(e.received.rfind("HTTP/1.1 431 ", 0), 0u) << e.received;
  EXPECT_NE(e.received.find("header_too_large"), std::string::npos);
  EXPECT_NE(e.received.find("Connection: close"), std::string::npos);

  // Just under the limit is fine.
  EXPECT_EQ(serve(get("/a", "X-Big: " + std::string(900, 'x') + "\r\n"), options).served, std::vector<std::string>{"/a"});
}

TEST(HttpServerStream, AnOversizedBodyIsRefusedWith413WhetherDeclaredOrChunked) {
  HttpServerOptions options;
  options.body_limit = 100;
  const std::string declared = "POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 101\r\n\r\n" + std::string(101, 'b');
  const std::string chunked =
      "POST /a HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" + std::string(64, 'b') + "\r\n40\r\n" +
      std::string(64, 'b') + "\r\n0\r\n\r\n";
  for (const std::string& sent : {declared, chunked}) {
    const Exchange e = serve(sent, options);
    EXPECT_TRUE(e.served.empty());
    EXPECT_EQ(e.received.rfind("HTTP/1.1 413 ", 0), 0u) << e.received;
    EXPECT_NE(e.received.find("body_too_large"), std::string::npos);
  }
  const std::string at_limit = "POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'b');
  EXPECT_EQ(serve(at_limit, options).served, std::vector<std::string>{"/a"});
}

TEST(HttpServerStream, MalformedRequestsAndTargetsAreRefusedWith400) {
  for (const std::string& sent : {std::string("NOT HTTP AT ALL\r\n\r\n"), std::string("GET /a HTTP/1.1\r\nBad Header\r\n\r\n"),
                                   std::string("POST /a HTTP/1.1\r\nContent-Length: x\r\n\r\n")}) {
    const Exchange e = serve(sent);
    EXPECT_TRUE(e.served.empty()) << sent;
    EXPECT_EQ(e.received.rfind("HTTP/1.1 400 ", 0), 0u) << sent << " -> " << e.received;
  }
  const Exchange target = serve(get("/v1//nodes") + get("/b"));
  EXPECT_TRUE(target.served.empty());
  EXPECT_NE(target.received.find("malformed request target"), std::string::npos) << target.received;
  EXPECT_NE(target.received.find(R"("field":"path")"), std::string::npos) << target.received;
}

TEST(HttpServerStream, APeerThatClosesMidRequestIsNeverHandled) {
  for (const std::string& sent : {std::string("GET /a HT"), std::string("GET /a HTTP/1.1\r\nHost: t\r\n"),
                                   std::string("POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")}) {
    const Exchange e = serve(sent);
    EXPECT_TRUE(e.served.empty()) << sent;
    EXPECT_EQ(e.received.find(" 200 "), std::string::npos) << e.received;
    EXPECT_EQ(e.in_flight_after, 0u);
  }
  // Closing between requests is the normal end of a keep-alive connection: nothing is written.
  const Exchange between = serve(get("/a"));
  EXPECT_EQ(between.served, std::vector<std::string>{"/a"});
  EXPECT_EQ(count_of(between.received, "HTTP/1.1"), 1u);
}

TEST(HttpServerStream, AFailedWriteIsNotFollowedByTheRequestsPipelinedBehindIt) {
  // One read takes both requests; the second I/O operation is the answer to the first.
  const Exchange e = serve(get("/a") + "POST /v1/jobs HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}", {}, 2);
  EXPECT_EQ(e.served, std::vector<std::string>{"/a"});
  EXPECT_EQ(e.received, "");
  EXPECT_EQ(e.in_flight_after, 0u);
}

// Each of the server's reads and writes in turn fails: the connection ends without a partial
// answer being taken for a whole one, no request is answered twice, and none stays in flight.
TEST(HttpServerStream, AFailedReadOrWriteAtAnyStepEndsTheConnectionCleanly) {
  const std::string sent = get("/a") + "POST /b HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhi";
  bool a_write_failed = false;
  std::size_t n = 1;
  for (;; ++n) {
    ASSERT_LT(n, 100u) << "no run without a failure";
    const Exchange e = serve(sent, {}, n, 16);
    EXPECT_EQ(e.in_flight_after, 0u) << n;
    const std::size_t answered = count_of(e.received, "HTTP/1.1 200 OK");
    EXPECT_LE(answered, e.served.size()) << n;
    EXPECT_LE(e.served.size(), answered + 1) << n;  // nothing is handled after a failed write
    if (e.served.size() > answered) a_write_failed = true;
    if (e.served.size() == 2 && answered == 2) break;
    // A request is handled only once it was read whole, and in order.
    for (std::size_t i = 0; i < e.served.size(); ++i) EXPECT_EQ(e.served[i], i == 0 ? "/a" : "/b") << n;
  }
  EXPECT_TRUE(a_write_failed) << "the walk never failed a write";
  EXPECT_GT(n, 3u);
}

TEST(HttpServerStream, AStreamedBodyIsWrittenAsPushedWithNoLengthUntilClosedThenTheConnectionEnds) {
  boost::asio::io_context io(1);
  std::shared_ptr<ResponseStream> body;
  HttpServer server(io, {},
                    [&](HttpRequest, HttpResponder respond) {
                      body = std::make_shared<ResponseStream>(1024);
                      body->push("first\n");
                      HttpResponse response{200, "text/event-stream", "", {}};
                      response.stream = body;
                      respond(std::move(response));
                      // Later pushes wake the connection; the close ends it.
                      boost::asio::post(io, [&] {
                        body->push("second\n");
                        boost::asio::post(io, [&] { body->close(); });
                      });
                    },
                    {});
  test::fail_count count(1'000'000);
  InMemoryStream server_end(io, count);
  test::stream client(io);
  server_end.connect(client);
  server_end.append(get("/stream") + get("/never"));
  server_end.close_remote();
  HttpServerTesting::serve(server, std::move(server_end));
  io.run();
  const std::string received = client.str();
  EXPECT_NE(received.find("Content-Type: text/event-stream\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n"), std::string::npos) << received;
  EXPECT_EQ(received.find("Content-Length"), std::string::npos) << received;
  EXPECT_TRUE(received.ends_with("\r\n\r\nfirst\nsecond\n")) << received;
  EXPECT_EQ(count_of(received, "HTTP/1.1 "), 1u) << "the request pipelined behind a stream is not answered";
  EXPECT_EQ(server.requests_in_flight(), 0u);
  EXPECT_TRUE(body->closed());
}

// A WebSocket upgrade over the in-memory stream: the client (Beast's own WebSocket stream) says
// "hello", the route's session answers "echo:hello", the client closes. `fail` makes the server's
// n-th I/O operation (and every later one) fail.
struct WebSocketExchange {
  bool opened = false;         // the route's session was made
  int closed = 0;              // times the session heard its connection end
  std::vector<std::string> got;  // what the session received
  std::string echoed;          // what the client read back
  bool ended = false;          // the io_context ran out of work (nothing hangs)
};

class EchoSession final : public WebSocketSession {
 public:
  EchoSession(std::shared_ptr<WebSocketPeer> peer, WebSocketExchange& e) : peer_(std::move(peer)), e_(e) {}
  void on_message(std::string text) override {
    e_.got.push_back(text);
    peer_->send("echo:" + text);
  }
  void on_closed(const std::string&) override {
    ++e_.closed;
    peer_.reset();  // the connection holds the session: let go of it
  }

 private:
  std::shared_ptr<WebSocketPeer> peer_;
  WebSocketExchange& e_;
};

WebSocketExchange websocket_exchange(std::optional<std::size_t> fail) {
  namespace websocket = boost::beast::websocket;
  using boost::system::error_code;
  boost::asio::io_context io(1);
  WebSocketExchange e;
  WebSocketRoute route{"/ws", [](const HttpRequest&) { return std::optional<HttpResponse>(); },
                       [&e](const HttpRequest&, std::shared_ptr<WebSocketPeer> peer) {
                         e.opened = true;
                         return std::make_shared<EchoSession>(std::move(peer), e);
                       }};
  HttpServer server(io, {}, [](HttpRequest, HttpResponder respond) { respond(HttpResponse{404, "text/plain", "", {}}); },
                    {route});
  test::fail_count count(fail.value_or(1'000'000));
  InMemoryStream server_end(io, count);
  websocket::stream<test::stream> client(io);
  server_end.connect(client.next_layer());
  HttpServerTesting::serve(server, std::move(server_end));
  boost::beast::flat_buffer buffer;
  client.async_handshake("t", "/ws", [&](error_code ec) {
    if (ec) return;
    client.async_write(boost::asio::buffer(std::string("hello")), [&](error_code ec, std::size_t) {
      if (ec) return;
      client.async_read(buffer, [&](error_code ec, std::size_t) {
        if (ec) return;
        e.echoed = boost::beast::buffers_to_string(buffer.data());
        client.async_close(websocket::close_code::normal, [](error_code) {});
      });
    });
  });
  // A deadline, not a pause: a connection that failed must end, not wait on a peer forever.
  io.run_for(std::chrono::seconds(20));
  e.ended = io.stopped();
  return e;
}

TEST(WebSocketStream, AFailedReadOrWriteAtAnyStepEndsTheConnectionAndTellsTheSessionOnce) {
  std::size_t n = 1;
  bool failed_after_open = false;
  for (;; ++n) {
    ASSERT_LT(n, 100u) << "no run without a failure";
    const WebSocketExchange e = websocket_exchange(n);
    EXPECT_TRUE(e.ended) << "failure at I/O step " << n << " left the connection hanging";
    EXPECT_EQ(e.closed, e.opened ? 1 : 0) << "failure at I/O step " << n;
    EXPECT_LE(e.got.size(), 1u) << n;
    if (e.opened && e.echoed.empty()) failed_after_open = true;
    if (e.echoed == "echo:hello") break;
  }
  EXPECT_TRUE(failed_after_open) << "the walk never failed the open connection";
  EXPECT_GT(n, 3u);
  const WebSocketExchange clean = websocket_exchange(std::nullopt);
  EXPECT_TRUE(clean.ended);
  EXPECT_EQ(clean.got, std::vector<std::string>{"hello"});
  EXPECT_EQ(clean.echoed, "echo:hello");
  EXPECT_EQ(clean.closed, 1);
}

TEST(ResponseStream, APushOverTheLimitClosesItAndKeepsWhatWasQueued) {
  ResponseStream stream(10);
  int wakes = 0;
  stream.on_ready([&] { ++wakes; });
  EXPECT_TRUE(stream.push("12345"));
  EXPECT_TRUE(stream.push("67890"));
  EXPECT_FALSE(stream.push("x"));
  EXPECT_TRUE(stream.closed());
  EXPECT_FALSE(stream.push(""));
  const auto queued = stream.take();
  ASSERT_EQ(queued.size(), 2u);
  EXPECT_EQ(*queued[0] + *queued[1], "1234567890");
  EXPECT_EQ(wakes, 3);  // two pushes and the close
}

}  // namespace
}  // namespace trainyard::net
