// GET /v1/events/stream end to end: a client reading the stream sees a job's events as it runs,
// a reconnect with Last-Event-ID gets the rest with no gap and none twice, and a user's stream
// carries no other user's job events; a graceful shutdown ends the streams.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <mutex>
#include <sstream>
#include <thread>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

struct SseEvent {
  std::int64_t id = 0;
  std::string type;
  Json data;
};

// A raw HTTP/1.1 GET whose answer is read as it comes, on its own thread, until the server
// closes or the reader is destroyed (which closes the socket).
class StreamReader {
 public:
  StreamReader(const std::string& url, const std::string& target, const std::string& token,
               const std::string& last_event_id = "") {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(std::stoi(url.substr(url.rfind(':') + 1))));
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\n";
    if (!last_event_id.empty()) request += "Last-Event-ID: " + last_event_id + "\r\n";
    request += "\r\n";
    EXPECT_EQ(::send(fd_, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
    reader_ = std::thread([this] {
      char chunk[4096];
      for (ssize_t n; (n = ::recv(fd_, chunk, sizeof chunk, 0)) > 0;) {
        std::lock_guard lock(mutex_);
        text_.append(chunk, static_cast<std::size_t>(n));
      }
      ended_ = true;
    });
  }
  ~StreamReader() {
    ::shutdown(fd_, SHUT_RDWR);
    reader_.join();
    ::close(fd_);
  }

  // The server closed the connection (or the read failed).
  bool ended() const { return ended_; }
  std::string text() {
    std::lock_guard lock(mutex_);
    return text_;
  }
  // The events received so far, in order (keep-alive comments left out).
  std::vector<SseEvent> events() {
    const std::string all = text();
    std::vector<SseEvent> out;
    std::size_t at = all.find("\r\n\r\n");
    if (at == std::string::npos) return out;
    at += 4;
    for (std::size_t end; (end = all.find("\n\n", at)) != std::string::npos; at = end + 2) {
      std::istringstream block(all.substr(at, end - at));
      SseEvent e;
      for (std::string line; std::getline(block, line);) {
        if (line.starts_with("id: ")) e.id = std::stoll(line.substr(4));
        if (line.starts_with("event: ")) e.type = line.substr(7);
        if (line.starts_with("data: ")) e.data = Json::parse(line.substr(6));
      }
      if (!e.type.empty()) out.push_back(std::move(e));
    }
    return out;
  }
  bool has(const std::string& type, std::int64_t job) {
    for (const SseEvent& e : events()) {
      if (e.type == type && e.data.value("job", std::int64_t{0}) == job) return true;
    }
    return false;
  }

 private:
  int fd_ = -1;
  std::mutex mutex_;
  std::string text_;
  std::atomic<bool> ended_{false};
  std::thread reader_;
};

std::vector<std::int64_t> ids_of(const std::vector<SseEvent>& events) {
  std::vector<std::int64_t> ids;
  for (const SseEvent& e : events) ids.push_back(e.id);
  return ids;
}

TEST(EventsStream, LiveThenResumedWithNoGapNoDuplicateAndNoOtherUsersJobs) {
  Cluster cluster;
  cluster.start_daemon({"--sse-keepalive-ms", "200"});
  cluster.start_agent("node-a");
  cluster.wait_for_nodes(1);
  const std::string alice = cluster.api("POST", "/v1/tokens", R"({"user":"alice"})").body["token"];
  const std::string bob = cluster.api("POST", "/v1/tokens", R"({"user":"bob"})").body["token"];

  StreamReader alice_live(cluster.url(), "/v1/events/stream?type=job.*", alice);
  StreamReader bob_live(cluster.url(), "/v1/events/stream", bob);
  // A keep-alive comes only once the stream is subscribed: from then on no event is missed.
  ASSERT_TRUE(eventually([&] { return alice_live.text().find(": keep-alive") != std::string::npos; }, 10s))
      << alice_live.text();
  ASSERT_TRUE(eventually([&] { return bob_live.text().find(": keep-alive") != std::string::npos; }, 10s));
  EXPECT_NE(alice_live.text().find("Content-Type: text/event-stream"), std::string::npos) << alice_live.text();
  {
    StreamReader scrape(cluster.url(), "/metrics", cluster.admin_token());
    EXPECT_TRUE(eventually([&] { return scrape.text().find("trainyard_sse_clients 2") != std::string::npos; }, 10s))
        << scrape.text();
  }

  const std::int64_t first = cluster.submit(argv_job("first", {"/bin/true"}), alice);
  cluster.wait_job_state(first, "SUCCEEDED", 20s);
  ASSERT_TRUE(eventually([&] { return alice_live.has("job.succeeded", first); }, 10s)) << alice_live.text();
  std::vector<SseEvent> seen = alice_live.events();
  ASSERT_EQ(seen.size(), 3u) << alice_live.text();
  EXPECT_EQ(seen[0].type, "job.submitted");
  EXPECT_EQ(seen[1].type, "job.started");
  EXPECT_EQ(seen[2].type, "job.succeeded");
  EXPECT_EQ(seen[2].data["user"], "alice");

  // Resumed after the submission: the stored rest first, then a second job live.
  StreamReader resumed(cluster.url(), "/v1/events/stream?type=job.*", alice, std::to_string(seen[0].id));
  ASSERT_TRUE(eventually([&] { return resumed.has("job.succeeded", first); }, 10s)) << resumed.text();
  const std::int64_t second = cluster.submit(argv_job("second", {"/bin/true"}), alice);
  cluster.wait_job_state(second, "SUCCEEDED", 20s);
  ASSERT_TRUE(eventually([&] { return resumed.has("job.succeeded", second); }, 10s)) << resumed.text();
  const ApiResult stored = cluster.api("GET", "/v1/events?type=job.*&after=" + std::to_string(seen[0].id), "", alice);
  ASSERT_EQ(stored.status, 200);
  std::vector<std::int64_t> expected;
  for (const Json& e : stored.body["events"]) expected.push_back(e["id"].get<std::int64_t>());
  ASSERT_EQ(expected.size(), 5u) << stored.body.dump();
  EXPECT_EQ(ids_of(resumed.events()), expected) << resumed.text();

  // Bob's own job's end comes after alice's events: had they leaked, they would be here by now.
  const std::int64_t bobs = cluster.submit(argv_job("bobs", {"/bin/true"}), bob);
  cluster.wait_job_state(bobs, "SUCCEEDED", 20s);
  ASSERT_TRUE(eventually([&] { return bob_live.has("job.succeeded", bobs); }, 10s)) << bob_live.text();
  for (const SseEvent& e : bob_live.events()) {
    EXPECT_NE(e.data.value("user", ""), "alice") << e.data.dump();
    EXPECT_TRUE(e.data.value("job", std::int64_t{0}) != first && e.data.value("job", std::int64_t{0}) != second)
        << e.data.dump();
  }

  // A graceful shutdown ends the streams rather than waiting on them.
  cluster.daemon().signal(SIGTERM);
  EXPECT_TRUE(eventually([&] { return alice_live.ended() && bob_live.ended() && resumed.ended(); }, 10s));
  EXPECT_EQ(cluster.daemon().wait_exit(10s), 0);
}

}  // namespace
}  // namespace trainyard::testing
