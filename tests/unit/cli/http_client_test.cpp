// The CLI's HTTP client against a tiny scripted HTTP server on 127.0.0.1:0 written with raw
// sockets (so Beast stays out of this file): keep-alive, reconnecting, timeouts and bad replies.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "cli/http_client.h"

namespace trainyard::cli {
namespace {

using namespace std::chrono_literals;

struct Seen {
  std::string method;
  std::string target;
  std::string head;  // request line and headers
  std::string body;
  int connection = 0;  // 1-based number of the connection it came on
};

// What the server does with a request.
struct Action {
  std::string bytes;         // sent back as they are (may be empty)
  bool close_after = false;  // then close the connection
  bool hold = false;         // send `bytes` and then nothing more; wait for the client to give up
};

std::string reply(int status, const std::string& body, const std::string& extra_headers = "") {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
         extra_headers + "\r\n" + body;
}

// Serves one connection at a time, in order, on its own thread; `stop()` (or the destructor)
// wakes it through a pipe wherever it waits.
class LoopbackServer {
 public:
  explicit LoopbackServer(std::function<Action(const Seen&)> handler) : handler_(std::move(handler)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 8) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || ::pipe(wake_) != 0) {
      throw std::runtime_error("cannot set up the loopback server");
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~LoopbackServer() {
    const char byte = 'x';
    [[maybe_unused]] auto n = ::write(wake_[1], &byte, 1);
    thread_.join();
    ::close(listen_fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<Seen> seen() const {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  int connections() const {
    std::lock_guard lock(mutex_);
    return accepted_;
  }
  // Waits until the server has closed `n` connections; false after the deadline.
  bool wait_closed(int n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, 5s, [&] { return closed_ >= n; });
  }

 private:
  // Waits until `fd` is readable; false when stopped.
  bool wait_readable(int fd) const {
    pollfd fds[2] = {{fd, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    while (::poll(fds, 2, -1) < 0) {
    }
    return (fds[1].revents & POLLIN) == 0;
  }

  // Reads more of the connection into `buffer`; false on end of stream, error or stop.
  bool read_more(int fd, std::string& buffer) const {
    if (!wait_readable(fd)) return false;
    char chunk[4096];
    const auto n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  bool read_request(int fd, std::string& buffer, Seen& seen) const {
    std::size_t end;
    while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
      if (!read_more(fd, buffer)) return false;
    }
    seen.head = buffer.substr(0, end);
    buffer.erase(0, end + 4);
    const auto space = seen.head.find(' ');
    seen.method = seen.head.substr(0, space);
    seen.target = seen.head.substr(space + 1, seen.head.find(' ', space + 1) - space - 1);
    std::size_t length = 0;
    if (const auto at = seen.head.find("Content-Length: "); at != std::string::npos) {
      length = std::stoul(seen.head.substr(at + 16));
    }
    while (buffer.size() < length) {
      if (!read_more(fd, buffer)) return false;
    }
    seen.body = buffer.substr(0, length);
    buffer.erase(0, length);
    return true;
  }

  void serve_connection(int fd, int number) {
    std::string buffer;
    Seen seen;
    seen.connection = number;
    while (read_request(fd, buffer, seen)) {
      {
        std::lock_guard lock(mutex_);
        seen_.push_back(seen);
      }
      const Action action = handler_(seen);
      if (!action.bytes.empty()) ::send(fd, action.bytes.data(), action.bytes.size(), MSG_NOSIGNAL);
      if (action.hold) {
        while (read_more(fd, buffer)) {
        }
        return;
      }
      if (action.close_after) return;
    }
  }

  void serve() {
    while (wait_readable(listen_fd_)) {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      int number;
      {
        std::lock_guard lock(mutex_);
        number = ++accepted_;
      }
      serve_connection(fd, number);
      ::close(fd);
      std::lock_guard lock(mutex_);
      ++closed_;
      changed_.notify_all();
    }
  }

  std::function<Action(const Seen&)> handler_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  int port_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Seen> seen_;
  int accepted_ = 0;
  int closed_ = 0;
  std::thread thread_;
};

Action echo_target(const Seen& s) { return {reply(200, s.method + " " + s.target + " " + s.body)}; }

HttpResponse expect_response(const HttpResult& result) {
  if (!result) {
    ADD_FAILURE() << "transport error: " << result.error().message;
    return {};
  }
  return *result;
}

std::string expect_failure(const HttpResult& result) {
  if (!result) {
    EXPECT_EQ(result.error().code, ErrorCode::unavailable);
    return result.error().message;
  }
  ADD_FAILURE() << "unexpected response " << result->status;
  return "";
}

HttpRequest get_request(std::string target) { return {.method = "GET", .target = std::move(target)}; }

TEST(HttpClient, KeepsOneConnectionForSeveralRequests) {
  LoopbackServer server(echo_target);
  auto client = make_http_client(parse_server_url(server.url()));
  EXPECT_EQ(expect_response(client->send(get_request("/v1/a?x=1"))).body, "GET /v1/a?x=1 ");
  const HttpResponse posted =
      expect_response(client->send({.method = "POST", .target = "/v1/jobs", .headers = {{"authorization", "Bearer t"}}, .body = R"({"n":1})"}));
  EXPECT_EQ(posted.status, 200);
  EXPECT_EQ(posted.body, R"(POST /v1/jobs {"n":1})");
  EXPECT_EQ(expect_response(client->send(get_request("/v1/c"))).body, "GET /v1/c ");
  EXPECT_EQ(server.connections(), 1);
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_NE(seen[1].head.find("Authorization: Bearer t"), std::string::npos) << seen[1].head;
  EXPECT_NE(seen[1].head.find("Host: 127.0.0.1:"), std::string::npos) << seen[1].head;
}

TEST(HttpClient, ErrorStatusesAreResponses) {
  LoopbackServer server([](const Seen&) { return Action{reply(404, R"({"error":{"message":"no job 9"}})")}; });
  const HttpResponse r =
      expect_response(make_http_client(parse_server_url(server.url()))->send(get_request("/v1/jobs/9")));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, R"({"error":{"message":"no job 9"}})");
}

TEST(HttpClient, AResponseCarriesWhereARedirectPoints) {
  LoopbackServer server([](const Seen&) { return Action{reply(307, "{}", "Location: http://10.0.0.2:8080/v1/jobs\r\n")}; });
  const HttpResponse r =
      expect_response(make_http_client(parse_server_url(server.url()))->send(get_request("/v1/jobs")));
  EXPECT_EQ(r.status, 307);
  EXPECT_EQ(r.headers, (std::vector<std::pair<std::string, std::string>>{{"location", "http://10.0.0.2:8080/v1/jobs"}}));
}

TEST(HttpClient, ReconnectsWhenTheServerClosedAnIdleConnection) {
  LoopbackServer server([](const Seen& s) { return Action{echo_target(s).bytes, /*close_after=*/true}; });
  auto client = make_http_client(parse_server_url(server.url()));
  EXPECT_EQ(expect_response(client->send(get_request("/one"))).status, 200);
  ASSERT_TRUE(server.wait_closed(1));
  // Even a request that is never repeated goes through: the close is noticed before sending.
  EXPECT_EQ(expect_response(client->send({.method = "POST", .target = "/two", .body = "b"})).body, "POST /two b");
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(server.seen().size(), 2u);
}

TEST(HttpClient, HonoursConnectionClose) {
  LoopbackServer server([](const Seen& s) { return Action{reply(200, s.target, "Connection: close\r\n")}; });
  auto client = make_http_client(parse_server_url(server.url()));
  EXPECT_EQ(expect_response(client->send(get_request("/one"))).body, "/one");
  EXPECT_EQ(expect_response(client->send(get_request("/two"))).body, "/two");
  EXPECT_EQ(server.connections(), 2);
}

// The server reads a request on a kept-alive connection and drops the connection unanswered.
Action drop_second_request_of_first_connection(const Seen& s, int& requests_on_first) {
  if (s.connection == 1 && ++requests_on_first == 2) return Action{"", /*close_after=*/true};
  return echo_target(s);
}

TEST(HttpClient, RepeatsAGetOnceWhenAKeptConnectionBreaks) {
  int requests_on_first = 0;
  LoopbackServer server([&](const Seen& s) { return drop_second_request_of_first_connection(s, requests_on_first); });
  auto client = make_http_client(parse_server_url(server.url()));
  EXPECT_EQ(expect_response(client->send(get_request("/one"))).status, 200);
  EXPECT_EQ(expect_response(client->send(get_request("/two"))).body, "GET /two ");
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(server.seen().size(), 3u);  // /two was sent twice
}

TEST(HttpClient, NeverRepeatsAPost) {
  int requests_on_first = 0;
  LoopbackServer server([&](const Seen& s) { return drop_second_request_of_first_connection(s, requests_on_first); });
  auto client = make_http_client(parse_server_url(server.url()));
  EXPECT_EQ(expect_response(client->send(get_request("/one"))).status, 200);
  const std::string failure = expect_failure(client->send({.method = "POST", .target = "/v1/jobs", .body = "{}"}));
  EXPECT_NE(failure.find("lost the connection to daemon at " + server.url()), std::string::npos) << failure;
  EXPECT_EQ(server.seen().size(), 2u);  // the server may have acted on it: not sent again
  // The client recovers for the next request.
  EXPECT_EQ(expect_response(client->send(get_request("/three"))).status, 200);
}

TEST(HttpClient, ClearMessageWhenNothingListens) {
  // A bound socket that does not listen refuses connections, and nobody else can take its port.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  const std::string failure = expect_failure(make_http_client(parse_server_url(url))->send(get_request("/v1/nodes")));
  EXPECT_EQ(failure.find("cannot reach daemon at " + url + ": "), 0u) << failure;
  EXPECT_EQ(make_http_client(parse_server_url(url))->send(get_request("/v1/nodes")).error().field, kNotConnected)
      << "nothing was sent: any request may go to another daemon";
  ::close(fd);
}

TEST(HttpClient, GivesUpOnASilentServer) {
  LoopbackServer server([](const Seen&) { return Action{"", false, /*hold=*/true}; });
  HttpClientOptions options;
  options.request_timeout = 100ms;
  const std::string failure =
      expect_failure(make_http_client(parse_server_url(server.url()), options)->send(get_request("/")));
  EXPECT_NE(failure.find("did not answer within 100 ms"), std::string::npos) << failure;
}

TEST(HttpClient, RejectsGarbledAndOversizedReplies) {
  LoopbackServer server([](const Seen& s) {
    if (s.target == "/garbled") return Action{"NOT HTTP AT ALL\r\n\r\n", true};
    return Action{reply(200, std::string(100, 'x'))};
  });
  HttpClientOptions options;
  options.body_limit = 10;
  auto client = make_http_client(parse_server_url(server.url()), options);
  EXPECT_NE(expect_failure(client->send(get_request("/garbled"))).find("garbled reply from daemon"), std::string::npos);
  EXPECT_NE(expect_failure(client->send(get_request("/big"))).find("larger than 10 bytes"), std::string::npos);
}

TEST(HttpClient, StreamsABodyWithoutLengthToItsEndAndReturnsOtherAnswersWhole) {
  LoopbackServer server([](const Seen& s) -> Action {
    if (s.target == "/refused") return {reply(400, R"({"error":"bad"})")};
    return {"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\nid: 1\ndata: x\n\n", true};
  });
  auto client = make_http_client(parse_server_url(server.url()));
  std::string streamed;
  const HttpResponse ok = expect_response(client->stream(get_request("/events"), [&](std::string_view piece) {
    streamed += piece;
    return true;
  }));
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.content_type, "text/event-stream");
  EXPECT_EQ(streamed, "id: 1\ndata: x\n\n");
  EXPECT_TRUE(ok.body.empty());
  streamed.clear();
  const HttpResponse refused = expect_response(client->stream(get_request("/refused"), [&](std::string_view piece) {
    streamed += piece;
    return true;
  }));
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.body, R"({"error":"bad"})");
  EXPECT_TRUE(streamed.empty());
}

TEST(HttpClient, AStreamHandsOnEachPieceAsItComes) {
  LoopbackServer server([](const Seen&) -> Action {
    return {"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nid: 1\ndata: x\n\n", false, /*hold=*/true};
  });
  HttpClientOptions options;
  options.stream_idle_timeout = 30s;
  auto client = make_http_client(parse_server_url(server.url()), options);
  const auto start = std::chrono::steady_clock::now();
  std::string streamed;
  const HttpResponse stopped = expect_response(client->stream(get_request("/events"), [&](std::string_view piece) {
    streamed += piece;
    return false;  // enough: stop reading
  }));
  EXPECT_EQ(stopped.status, 200);
  EXPECT_EQ(streamed, "id: 1\ndata: x\n\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << "the piece waited for more to come";
}

TEST(HttpClient, AStreamThatGoesSilentIsLost) {
  LoopbackServer server([](const Seen&) -> Action {
    return {"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n: hi\n", false, /*hold=*/true};
  });
  HttpClientOptions options;
  options.stream_idle_timeout = 200ms;
  auto client = make_http_client(parse_server_url(server.url()), options);
  std::string streamed;
  const std::string failure = expect_failure(client->stream(get_request("/events"), [&](std::string_view piece) {
    streamed += piece;
    return true;
  }));
  EXPECT_EQ(streamed, ": hi\n");
  EXPECT_FALSE(failure.empty());
}

}  // namespace
}  // namespace trainyard::cli
