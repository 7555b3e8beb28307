// Active / standby daemons on one throwaway PostgreSQL: the second
// daemon is a standby that sends everything to the active one (307) or, knowing none, answers 503;
// after a kill -9 of the active daemon it takes over within 10 s and serves what was acknowledged;
// an active daemon whose lease was taken over exits.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <map>

#include "store/postgres.h"
#include "tests/integration/cluster.h"
#include "tests/support/postgres_server.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

// The whole answer to one GET, headers included, as the wire has it (the test's API client does not
// show headers). `url` is http://127.0.0.1:PORT.
std::string raw_get(const std::string& url, const std::string& target) {
  const int port = std::stoi(url.substr(url.rfind(':') + 1));
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  std::string reply;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    const std::string request = "GET " + target + " HTTP/1.1\r\nHost: daemon\r\nConnection: close\r\n\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) reply.append(buffer, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return reply;
}

std::string header_of(const std::string& reply, const std::string& name) {
  const std::size_t at = reply.find("\r\n" + name + ": ");
  if (at == std::string::npos) return "";
  const std::size_t from = at + name.size() + 4;
  return reply.substr(from, reply.find("\r\n", from) - from);
}

// GET /healthz's body; null while nothing listens (a standby closes its port to listen as active).
Json healthz(Cluster& cluster) {
  const std::string reply = raw_get(cluster.url(), "/healthz");
  const std::size_t body = reply.find("\r\n\r\n");
  return body == std::string::npos ? Json() : Json::parse(reply.substr(body + 4), nullptr, false);
}

std::string active_url_seen_by(Cluster& cluster) {
  const Json body = healthz(cluster);
  return body.is_object() ? body.value("active_url", "") : "";
}

bool is_active(Cluster& cluster) { return cluster.daemon_role() == "active"; }

class ActiveStandby : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = PostgresServer::unavailable()) GTEST_SKIP() << *why;
    server.emplace(PostgresServer::Options{});
    flags = {"--store", server->fresh_store_url(), "--lease-ttl-ms", "3000"};
  }

  std::optional<PostgresServer> server;
  std::vector<std::string> flags;
};

TEST_F(ActiveStandby, TheStandbyRedirectsToTheActiveDaemonAndTakesOverWithinTenSecondsOfAKill9) {
  Cluster first, second;
  first.start_daemon(flags);
  ASSERT_TRUE(eventually([&] { return is_active(first); }, 20s)) << first.daemon_log();
  second.start_daemon(flags);
  ASSERT_TRUE(eventually([&] { return active_url_seen_by(second) == first.url(); }, 20s))
      << second.daemon_log();
  const Json standby = healthz(second);
  EXPECT_EQ(standby["role"], "standby");
  EXPECT_EQ(standby["epoch"], healthz(first)["epoch"]);
  EXPECT_EQ(healthz(first)["active_url"], first.url());

  const std::string redirect = raw_get(second.url(), "/v1/jobs?state=PENDING&limit=5");
  EXPECT_EQ(redirect.substr(0, redirect.find("\r\n")), "HTTP/1.1 307 Temporary Redirect") << redirect;
  EXPECT_EQ(header_of(redirect, "Location"), first.url() + "/v1/jobs?state=PENDING&limit=5") << redirect;
  EXPECT_EQ(header_of(redirect, "Content-Type"), "application/problem+json") << redirect;
  const std::string agent_upgrade = raw_get(second.url(), "/v1/agent/connect");
  EXPECT_EQ(header_of(agent_upgrade, "Location"), first.url() + "/v1/agent/connect") << agent_upgrade;

  std::map<std::int64_t, std::string> acknowledged;  // id -> name; pending: there are no nodes
  for (int i = 0; i < 20; ++i) {
    const Json spec = {{"name", "before-" + std::to_string(i)},
                       {"wait_for_capacity", true},
                       {"command", {{"argv", {"/bin/true"}}}}};
    const auto r = first.api("POST", "/v1/jobs", spec.dump());
    ASSERT_EQ(r.status, 201) << r.body.dump();
    acknowledged[r.body["id"].get<std::int64_t>()] = spec["name"];
  }

  first.kill_daemon(SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually([&] { return is_active(second); }, 10s)) << second.daemon_log();
  std::cout << "[ figures ] standby active " << std::chrono::duration_cast<std::chrono::milliseconds>(
                                                       std::chrono::steady_clock::now() - killed).count()
            << " ms after the kill -9 (lease ttl 3000 ms)\n";
  const Json active = healthz(second);
  EXPECT_EQ(active["epoch"], standby["epoch"].get<std::int64_t>() + 1);
  EXPECT_EQ(active["active_url"], second.url());

  // The first daemon's admin token is in the shared store: the test keeps using it (the second one
  // made its own token file only once active, after the test read its data dir).
  for (const auto& [id, name] : acknowledged) {
    const auto r = second.api("GET", "/v1/jobs/" + std::to_string(id), "", first.admin_token());
    ASSERT_EQ(r.status, 200) << "job " << id << " was acknowledged but is gone: " << r.body.dump();
    EXPECT_EQ(r.body["name"], name);
    EXPECT_EQ(r.body["state"], "PENDING");
  }
  const auto after = second.api("POST", "/v1/jobs", Json{{"name", "after"}, {"wait_for_capacity", true},
                                                         {"command", {{"argv", {"/bin/true"}}}}}.dump(),
                                first.admin_token());
  ASSERT_EQ(after.status, 201) << after.body.dump();
  EXPECT_GT(after.body["id"].get<std::int64_t>(), acknowledged.rbegin()->first);
}

// A daemon restarted at its own address while its dead predecessor's lease still runs: no active
// daemon is known (not a redirect to itself) until the lease runs out and it takes over.
TEST_F(ActiveStandby, ARestartedDaemonAnswers503UntilItsPredecessorsLeaseRunsOut) {
  Cluster cluster;
  cluster.start_daemon(flags);
  ASSERT_TRUE(eventually([&] { return is_active(cluster); }, 20s)) << cluster.daemon_log();
  const std::int64_t job = cluster.submit({{"name", "kept"}, {"wait_for_capacity", true}, {"command", {{"argv", {"/bin/true"}}}}});
  cluster.kill_daemon(SIGKILL);
  cluster.start_daemon(flags);

  const std::string unknown = raw_get(cluster.url(), "/v1/jobs");
  EXPECT_EQ(unknown.substr(0, unknown.find("\r\n")), "HTTP/1.1 503 Service Unavailable") << unknown;
  EXPECT_EQ(header_of(unknown, "Retry-After"), "1") << unknown;
  EXPECT_NE(unknown.find("\"role\":\"standby\""), std::string::npos) << unknown;

  ASSERT_TRUE(eventually([&] { return is_active(cluster); }, 10s)) << cluster.daemon_log();
  EXPECT_EQ(cluster.api("GET", "/v1/jobs/" + std::to_string(job)).body["name"], "kept");
}

// A graceful stop (SIGTERM) lets the lease go after the last commit: the standby takes over at its
// next try (every ttl/5 = 6 s here), long before the 30 s ttl would have run out.
TEST_F(ActiveStandby, ASigtermedActiveDaemonHandsOverWithoutWaitingForTheTtl) {
  flags.back() = "30000";
  Cluster first, second;
  first.start_daemon(flags);
  ASSERT_TRUE(eventually([&] { return is_active(first); }, 20s)) << first.daemon_log();
  second.start_daemon(flags);
  ASSERT_TRUE(eventually([&] { return active_url_seen_by(second) == first.url(); }, 20s)) << second.daemon_log();
  const std::int64_t job = first.submit({{"name", "kept"}, {"wait_for_capacity", true}, {"command", {{"argv", {"/bin/true"}}}}});

  first.kill_daemon(SIGTERM);
  ASSERT_TRUE(eventually([&] { return is_active(second); }, 15s)) << second.daemon_log();
  EXPECT_NE(first.daemon_log().find("event=lease_released"), std::string::npos) << first.daemon_log();
  EXPECT_EQ(second.api("GET", "/v1/jobs/" + std::to_string(job), "", first.admin_token()).body["name"], "kept");
}

// Another daemon took the lease (here: the epoch moved on under it): the active daemon's next renewal
// finds it lost, and it ends at once with the status a supervisor restarts it on.
TEST_F(ActiveStandby, AnActiveDaemonWhoseLeaseWasTakenOverExitsSayingSo) {
  Cluster cluster;
  cluster.start_daemon(flags);
  ASSERT_TRUE(eventually([&] { return is_active(cluster); }, 20s)) << cluster.daemon_log();
  store::pg::Connection(flags[1]).exec("UPDATE lease SET epoch = epoch + 1, holder = 'another', advertise_url = 'http://another:1'");
  const std::optional<int> status = cluster.daemon().wait_exit(10s);
  ASSERT_TRUE(status) << "the daemon kept running without its lease:\n" << cluster.daemon_log();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 3) << *status;
  EXPECT_NE(cluster.daemon_log().find("event=lease_lost"), std::string::npos) << cluster.daemon_log();
}

}  // namespace
}  // namespace trainyard::testing
