// Hostile clients at the daemon's doors: a job holding its node's address's connections, requests
// whose credentials or framing could be read two ways, and dependencies that would reveal another
// user's jobs.
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <gtest/gtest.h>
#include <thread>
#include <vector>

#include "tests/integration/cluster.h"
#include "tests/integration/raw_connection.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

std::size_t times_in(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

// What a job on a node can do without any credential: hold `count` connections to the daemon from
// the node's address, saying nothing, and open another for each one the daemon closes.
class ConnectionHog {
 public:
  ConnectionHog(const std::string& url, std::size_t count)
      : url_(url), connections_(count, pollfd{-1, POLLIN, 0}), thread_([this] { run(); }) {}
  ~ConnectionHog() {
    stop_ = true;
    thread_.join();
    for (const pollfd& p : connections_) ::close(p.fd);
  }
  ConnectionHog(const ConnectionHog&) = delete;
  ConnectionHog& operator=(const ConnectionHog&) = delete;

 private:
  int open() const {
    RawConnection connection(url_);
    return connection.connected() ? connection.release() : -1;
  }
  void run() {
    while (!stop_) {
      for (pollfd& p : connections_) {
        if (p.fd < 0) p.fd = open();
      }
      if (::poll(connections_.data(), connections_.size(), 100) <= 0) continue;
      for (pollfd& p : connections_) {
        if (p.revents == 0) continue;
        // An idle connection hears nothing but its close (or why it was refused): open another.
        ::close(p.fd);
        p.fd = -1;
        p.revents = 0;
      }
    }
  }

  std::string url_;
  std::vector<pollfd> connections_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The test holds a thousand connections more than a shell's usual 1,024 descriptors allow; the
// daemon and agents it starts inherit the raised limit.
void raise_descriptor_limit(rlim_t needed) {
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  ASSERT_GE(limit.rlim_max, needed) << "the hard descriptor limit is too low for this test";
  limit.rlim_cur = std::max(limit.rlim_cur, needed);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &limit), 0);
}

cli::HttpResult admin_call_on_a_new_connection(const Cluster& cluster, const std::string& target) {
  cli::HttpClientOptions options;
  options.connect_timeout = 5s;
  options.request_timeout = 5s;
  cli::HttpRequest request{.method = "GET", .target = target};
  request.headers.emplace("authorization", "Bearer " + cluster.admin_token());
  return cli::make_http_client(cli::parse_server_url(cluster.url()), options)->send(request);
}

TEST(HostileDoors, AJobHoldingAThousandIdleConnectionsLocksOutNeitherItsNodesAgentNorAnAdmin) {
  raise_descriptor_limit(4096);
  Cluster cluster;
  cluster.start_daemon();  // --max-connections-per-ip 1000, as by default
  cluster.start_agent("node-a");
  cluster.wait_for_nodes(1);
  const pid_t daemon = cluster.daemon().pid();
  const std::size_t held_before = open_descriptors(daemon);
  ConnectionHog hog(cluster.url(), 1000);
  ASSERT_TRUE(eventually([&] { return open_descriptors(daemon) >= held_before + 990; }, 30s))
      << "the daemon never held the hog's connections; it holds " << open_descriptors(daemon);

  // The node's agent restarts while the job holds every unauthenticated connection its address may have.
  const std::string agent_log = cluster.dir() + "/agent-node-a.log";
  cluster.stop_agent("node-a", SIGTERM);
  cluster.start_agent("node-a");
  EXPECT_TRUE(eventually([&] { return times_in(read_text(agent_log), "event=registered") >= 2; }, 30s))
      << "the restarted agent never got back in:\n" << read_text(agent_log).substr(0, 6000);
  cluster.wait_for_nodes(1);
  EXPECT_EQ(read_text(agent_log).find("HTTP 500"), std::string::npos) << read_text(agent_log).substr(0, 6000);

  const cli::HttpResult nodes = admin_call_on_a_new_connection(cluster, "/v1/nodes");
  ASSERT_TRUE(nodes) << "the admin was locked out: " << nodes.error().message;
  EXPECT_EQ(nodes->status, 200);
  EXPECT_NE(cluster.daemon_log().find("event=connection_evicted for_remote=127.0.0.1"), std::string::npos)
      << "the hog's connections never had to give way";
}

TEST(HostileDoors, TwoAuthorizationFieldsOrABadTransferEncodingAre400AndTheConnectionIsClosed) {
  Cluster cluster;
  cluster.start_daemon();
  const std::string bob = cluster.api("POST", "/v1/tokens", Json{{"user", "bob"}}.dump()).body.value("token", "");
  ASSERT_FALSE(bob.empty());

  RawConnection two(cluster.url());
  ASSERT_TRUE(two.send("GET /v1/jobs?user=root HTTP/1.1\r\nHost: daemon\r\nAuthorization: Bearer " + bob +
                       "\r\nAuthorization: Bearer " + cluster.admin_token() + "\r\n\r\n"));
  const std::string refused = two.read_until("}", 10s);
  EXPECT_EQ(refused.rfind("HTTP/1.1 400", 0), 0u) << "not one of the two tokens may count: " << refused;
  EXPECT_NE(refused.find(R"("field":"authorization")"), std::string::npos) << refused;
  EXPECT_TRUE(two.closed_by_server(10s));

  // Read by its length, the body would be a job and what follows another request; a proxy in
  // front that reads the encoding would frame them otherwise (request smuggling).
  Json smuggled = shell_job("smuggled", "true");
  smuggled["wait_for_capacity"] = true;
  const std::string job = smuggled.dump();
  const std::string admin = "Authorization: Bearer " + cluster.admin_token() + "\r\n";
  RawConnection smuggler(cluster.url());
  ASSERT_TRUE(smuggler.send("POST /v1/jobs HTTP/1.1\r\nHost: daemon\r\n" + admin +
                            "Content-Type: application/json\r\nTransfer-Encoding: xchunked\r\nContent-Length: " +
                            std::to_string(job.size()) + "\r\n\r\n" + job + "GET /v1/jobs HTTP/1.1\r\nHost: daemon\r\n" +
                            admin + "\r\n"));
  const std::string answer = smuggler.read_until("}", 10s);
  EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer;
  EXPECT_NE(answer.find(R"("field":"transfer-encoding")"), std::string::npos) << answer;
  EXPECT_TRUE(smuggler.closed_by_server(10s)) << "the connection was kept for what followed";
  EXPECT_EQ(times_in(answer, "HTTP/1.1 "), 1u) << answer;
  EXPECT_EQ(cluster.api("GET", "/v1/jobs").body["jobs"].size(), 0u) << "the smuggled job was accepted";
}

TEST(HostileDoors, ADependencyOnAnotherUsersJobIsAnsweredAsOneOnAMissingJob) {
  Cluster cluster;
  cluster.start_daemon();
  const auto token_of = [&](const std::string& user) {
    return cluster.api("POST", "/v1/tokens", Json{{"user", user}}.dump()).body.value("token", "");
  };
  const std::string alice = token_of("alice");
  const std::string bob = token_of("bob");
  Json waiting = shell_job("alices", "true");
  waiting["wait_for_capacity"] = true;
  waiting["array"] = "0-4";
  std::int64_t alices = 0;
  for (int i = 0; i < 3; ++i) alices = cluster.submit(waiting, alice);  // an id of two digits
  const auto depending_on = [&](std::int64_t id) {
    Json spec = shell_job("bobs", "true");
    spec["wait_for_capacity"] = true;
    spec["depends_on"] = Json::array({{{"job", id}}});
    return spec.dump();
  };
  const std::int64_t missing = 97;
  const ApiResult none = cluster.api("POST", "/v1/jobs", depending_on(missing), bob);
  ASSERT_EQ(none.status, 400) << none.body.dump();
  const ApiResult hers = cluster.api("POST", "/v1/jobs", depending_on(alices), bob);
  std::string hers_text = hers.body.dump();
  hers_text.replace(hers_text.find(std::to_string(alices)), std::to_string(alices).size(), std::to_string(missing));
  EXPECT_EQ(hers.status, 400);
  EXPECT_EQ(hers_text, none.body.dump()) << "alice's array answered otherwise than a missing job";
  EXPECT_EQ(cluster.api("POST", "/v1/jobs", depending_on(alices), alice).status, 201);
}

}  // namespace
}  // namespace trainyard::testing
