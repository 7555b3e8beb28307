// Webhooks against a receiver inside the test (a real HTTP server on an ephemeral loopback port):
// every event arrives with a valid signature through 500s, 429 with Retry-After, timeouts and
// dropped connections, and through a kill -9 of the daemon; a user cannot point a webhook at loopback.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <csignal>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "net/http_server.h"
#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

// Computed here, independently of the daemon's signer.
std::string expected_signature(const std::string& secret, const std::string& timestamp, const std::string& body) {
  const std::string base = "v0:" + timestamp + ":" + body;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), reinterpret_cast<const unsigned char*>(base.data()),
       base.size(), digest, &length);
  std::string hex = "v0=";
  char byte[3];
  for (unsigned int i = 0; i < length; ++i) {
    std::snprintf(byte, sizeof byte, "%02x", digest[i]);
    hex += byte;
  }
  return hex;
}

// Answers 500 to every 4th request, 429 (Retry-After: 1) to every 7th, never answers every 9th (the
// daemon's timeout) and drops the connection of every 11th: its header promises a body, then the
// connection closes (a receiver that crashed mid-answer). Records the others.
class Receiver {
 public:
  Receiver()
      : work_(io_.get_executor()),
        server_(io_, {}, [this](net::HttpRequest r, net::HttpResponder respond) { handle(std::move(r), std::move(respond)); }, {}) {
    port_ = server_.listen("127.0.0.1", 0);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Receiver() {
    boost::asio::post(io_, [this] { server_.stop(); });
    work_.reset();
    io_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }

  struct Delivery {
    std::string event_id, timestamp, signature, body;
  };
  int dropped() const { return dropped_; }
  std::vector<Delivery> accepted() {
    std::lock_guard lock(mutex_);
    return accepted_;
  }

 private:
  void handle(net::HttpRequest r, net::HttpResponder respond) {
    const int n = ++requests_;
    if (n % 9 == 0) {
      held_.push_back(std::move(respond));  // never answered: the daemon times out
      return;
    }
    if (n % 11 == 0) {
      ++dropped_;
      return respond(dropped_mid_answer());
    }
    if (n % 4 == 0) return respond({500, "text/plain", "boom", {}});
    if (n % 7 == 0) return respond({429, "text/plain", "slow down", {{"Retry-After", "1"}}});
    {
      std::lock_guard lock(mutex_);
      accepted_.push_back({r.header("x-trainyard-event-id"), r.header("x-trainyard-request-timestamp"),
                           r.header("x-trainyard-signature"), r.body});
    }
    respond({200, "text/plain", "ok", {}});
  }

  static net::HttpResponse dropped_mid_answer() {
    auto body = std::make_shared<net::ResponseStream>(1024);
    body->close();
    return {200, "text/plain", "", {{"Content-Length", "64"}}, body};
  }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  net::HttpServer server_;
  unsigned short port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<Delivery> accepted_;
  std::vector<net::HttpResponder> held_;
  int requests_ = 0;
  std::atomic<int> dropped_ = 0;
};

const std::vector<std::string> kQuickWebhooks = {"--webhook-backoff-initial-ms", "50", "--webhook-backoff-cap-ms", "300",
                                                 "--webhook-timeout-ms", "1000", "--webhook-max-per-minute", "100000"};

TEST(Webhooks, EveryEventArrivesSignedThroughFailuresTimeoutsDroppedConnectionsAndAKill9) {
  Receiver receiver;
  Cluster cluster;
  cluster.start_daemon(kQuickWebhooks);
  const ApiResult made = cluster.api("POST", "/v1/webhooks",
                                     Json{{"url", receiver.url()}, {"events", {"audit.token.*"}}, {"format", "json"}}.dump());
  ASSERT_EQ(made.status, 201) << made.body.dump();
  const std::string secret = made.body["secret"];
  constexpr int kEvents = 40;
  for (int i = 0; i < kEvents; ++i) {
    ASSERT_EQ(cluster.api("POST", "/v1/tokens", Json{{"user", "u" + std::to_string(i)}}.dump()).status, 201);
    if (i == kEvents / 2) {
      cluster.kill_daemon(SIGKILL);
      cluster.start_daemon(kQuickWebhooks);
    }
  }
  std::set<std::string> ids;
  ASSERT_TRUE(eventually(
      [&] {
        ids.clear();
        for (const auto& d : receiver.accepted()) ids.insert(d.event_id);
        return ids.size() == kEvents;
      },
      60s))
      << ids.size() << " of " << kEvents << " events delivered\n" << cluster.daemon_log();
  EXPECT_GT(receiver.dropped(), 0);
  for (const auto& d : receiver.accepted()) {
    EXPECT_EQ(d.signature, expected_signature(secret, d.timestamp, d.body)) << d.body;
    EXPECT_EQ(std::to_string(Json::parse(d.body)["id"].get<std::int64_t>()), d.event_id);
  }
  // The deliveries list what they carried by type, not by event id alone.
  const Json deliveries = cluster.api("GET", "/v1/webhooks/" + std::to_string(made.body["id"].get<std::int64_t>()) +
                                                 "/deliveries?limit=1000").body["deliveries"];
  ASSERT_FALSE(deliveries.empty());
  int carried = 0;
  for (const Json& d : deliveries) {
    ASSERT_TRUE(d["event_types"].is_object()) << d.dump(2);
    for (const auto& [type, n] : d["event_types"].items()) {
      EXPECT_EQ(type, "audit.token.created") << d.dump(2);
      carried += n.get<int>();
    }
  }
  EXPECT_GE(carried, kEvents) << deliveries.dump(2);
}

TEST(Webhooks, AUserCannotPointAWebhookAtLoopback) {
  Cluster cluster;
  cluster.start_daemon({"--webhook-allowed-hosts", "127.0.0.1", "--webhook-allowed-hosts", "localhost"});
  const ApiResult token = cluster.api("POST", "/v1/tokens", R"({"user":"alice"})");
  ASSERT_EQ(token.status, 201);
  const std::string alice = token.body["token"];
  const ApiResult literal = cluster.api("POST", "/v1/webhooks", R"({"url":"http://127.0.0.1:9/x","events":["job.failed"]})", alice);
  EXPECT_EQ(literal.status, 400) << literal.body.dump();
  EXPECT_EQ(literal.body["error"]["field"], "url");
  const ApiResult other = cluster.api("POST", "/v1/webhooks", R"({"url":"https://evil.example/x","events":["job.failed"]})", alice);
  EXPECT_EQ(other.status, 400) << other.body.dump();
  // A name that resolves to loopback is accepted at registration but never dialled.
  const ApiResult name = cluster.api("POST", "/v1/webhooks", R"({"url":"http://localhost:9/x","events":["job.*"]})", alice);
  ASSERT_EQ(name.status, 201) << name.body.dump();
  const ApiResult test = cluster.api("POST", "/v1/webhooks/" + std::to_string(name.body["id"].get<int>()) + "/test", "", alice);
  ASSERT_EQ(test.status, 200) << test.body.dump();
  EXPECT_EQ(test.body["delivered"], false);
  EXPECT_NE(test.body["error"].get<std::string>().find("refused to connect"), std::string::npos) << test.body.dump();
}

}  // namespace
}  // namespace trainyard::testing
