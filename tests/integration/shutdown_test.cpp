// Graceful shutdown: on SIGTERM the daemon answers what it is handling, refuses new connections,
// tells its agents it is going away and exits 0; the agents' jobs run on into the next daemon.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <future>
#include <gtest/gtest.h>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

// One exchange on a connection of its own (the cluster's client is not for other threads).
cli::HttpResult fetch(const std::string& url, const std::string& target, const std::string& token) {
  const auto client = cli::make_http_client(cli::parse_server_url(url));
  return client->send({.method = "GET", .target = target, .headers = {{"authorization", "Bearer " + token}}});
}

double requests_in_flight(const Cluster& cluster) {
  const auto result = fetch(cluster.url(), "/metrics", cluster.admin_token());
  if (!result) return -1;
  const std::string name = "\ntrainyard_http_requests_in_flight ";
  const auto at = result->body.find(name);
  return at == std::string::npos ? -1 : std::stod(result->body.substr(at + name.size()));
}

bool connection_refused(const std::string& url) {
  const int port = std::stoi(url.substr(url.rfind(':') + 1));
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool refused =
      ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 && errno == ECONNREFUSED;
  ::close(fd);
  return refused;
}

TEST(Shutdown, SigtermAnswersTheRequestInFlightRefusesNewOnesAndAgentsKeepTheirJobs) {
  Cluster cluster;
  // Long node timeout: the agent is paused below, and must not be declared DOWN meanwhile.
  cluster.start_daemon({"--node-timeout-ms", "60000", "--shutdown-grace-ms", "8000"});
  cluster.start_agent("node-a");
  cluster.wait_for_nodes(1);
  const std::string gate = cluster.dir() + "/gate";
  const Json spec = {
      {"name", "long"},
      {"cores_per_node", 1},
      {"command", {{"argv", {"/bin/sh", "-c", "echo started; while [ ! -f " + gate + " ]; do sleep 0.05; done"}}}}};
  const auto id = cluster.submit(spec);
  cluster.wait_job_state(id, "RUNNING", 20s);

  // A log fetch waits for the agent's answer: with the agent paused, it stays in flight.
  cluster.agent("node-a").signal(SIGSTOP);
  auto logs = std::async(std::launch::async, [url = cluster.url(), token = cluster.admin_token(), id] {
    return fetch(url, "/v1/jobs/" + std::to_string(id) + "/logs", token);
  });
  // In flight: the log fetch and the scrape asking.
  ASSERT_TRUE(eventually([&] { return requests_in_flight(cluster) >= 2; }, 10s)) << cluster.daemon_log();

  const auto signalled = std::chrono::steady_clock::now();
  cluster.daemon().signal(SIGTERM);
  EXPECT_TRUE(eventually([&] { return connection_refused(cluster.url()); }, 5s)) << cluster.daemon_log();
  cluster.agent("node-a").signal(SIGCONT);

  const auto result = logs.get();
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_EQ(result->status, 200) << result->body;
  const Json body = Json::parse(result->body);
  EXPECT_EQ(body["logs"][0].value("error", ""), "") << body.dump(2);
  EXPECT_NE(body["logs"][0]["text"].get<std::string>().find("started"), std::string::npos) << body.dump(2);

  const auto status = cluster.daemon().wait_exit(8s + 5s);
  ASSERT_TRUE(status.has_value()) << "daemon still running:\n" << cluster.daemon_log();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "wait status " << *status << "\n"
                                                               << cluster.daemon_log();
  EXPECT_LT(std::chrono::steady_clock::now() - signalled, 8s);
  const std::string daemon_log = cluster.daemon_log();
  for (const char* phase : {"event=shutdown_started", "event=shutdown_requests_answered answered=1 unanswered=0",
                            "event=shutdown_agents_told agents=1 closed=1", "event=shutdown_complete"}) {
    EXPECT_NE(daemon_log.find(phase), std::string::npos) << phase << "\n" << daemon_log;
  }
  const std::string agent_log = cluster.dir() + "/agent-node-a.log";
  EXPECT_TRUE(eventually([&] { return read_text(agent_log).find("code 1001 (going away)") != std::string::npos; }, 5s))
      << read_text(agent_log);

  // The next daemon finds the agent back and its job still on its first attempt.
  cluster.kill_daemon(SIGKILL);  // reaps the exited process
  cluster.start_daemon();
  cluster.wait_for_nodes(1);
  EXPECT_EQ(cluster.api("GET", "/v1/jobs/" + std::to_string(id)).body["state"], "RUNNING");
  { std::ofstream(gate) << "go"; }
  const Json job = cluster.wait_job_state(id, "SUCCEEDED", 20s);
  EXPECT_EQ(job["attempts"], 1) << job.dump(2);
  EXPECT_EQ(job["infra_retries"], 0) << job.dump(2);
}

// A paused agent keeps a log fetch in flight for as long as the test likes.
class StuckRequest {
 public:
  explicit StuckRequest(Cluster& cluster, const std::vector<std::string>& daemon_flags) : cluster_(cluster) {
    std::vector<std::string> flags = {"--node-timeout-ms", "60000"};
    flags.insert(flags.end(), daemon_flags.begin(), daemon_flags.end());
    cluster.start_daemon(flags);
    cluster.start_agent("node-a");
    cluster.wait_for_nodes(1);
    const auto id = cluster.submit({{"name", "sleeper"}, {"command", {{"argv", {"/bin/sleep", "600"}}}}});
    cluster.wait_job_state(id, "RUNNING", 20s);
    cluster.agent("node-a").signal(SIGSTOP);
    logs_ = std::async(std::launch::async, [url = cluster.url(), token = cluster.admin_token(), id] {
      return fetch(url, "/v1/jobs/" + std::to_string(id) + "/logs", token);
    });
    EXPECT_TRUE(eventually([&] { return requests_in_flight(cluster) >= 2; }, 10s)) << cluster.daemon_log();
  }
  ~StuckRequest() {
    cluster_.agent("node-a").signal(SIGCONT);
    logs_.wait();
  }

 private:
  Cluster& cluster_;
  std::future<cli::HttpResult> logs_;
};

TEST(Shutdown, ARequestOutlastingTheGraceDoesNotHoldTheDaemon) {
  Cluster cluster;
  StuckRequest stuck(cluster, {"--shutdown-grace-ms", "300"});
  cluster.daemon().signal(SIGTERM);
  const auto status = cluster.daemon().wait_exit(5s);
  ASSERT_TRUE(status.has_value()) << "daemon still running:\n" << cluster.daemon_log();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << "wait status " << *status;
  EXPECT_NE(cluster.daemon_log().find("event=shutdown_requests_answered answered=0 unanswered=1"), std::string::npos)
      << cluster.daemon_log();
}

TEST(Shutdown, ASecondSignalExitsAtOnce) {
  Cluster cluster;
  StuckRequest stuck(cluster, {"--shutdown-grace-ms", "600000"});
  cluster.daemon().signal(SIGTERM);
  ASSERT_TRUE(eventually([&] { return cluster.daemon_log().find("event=shutdown_started") != std::string::npos; }, 5s))
      << cluster.daemon_log();
  cluster.daemon().signal(SIGINT);
  const auto status = cluster.daemon().wait_exit(5s);
  ASSERT_TRUE(status.has_value()) << "daemon still running:\n" << cluster.daemon_log();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 1) << "wait status " << *status;
  EXPECT_NE(cluster.daemon_log().find("event=shutdown_forced signal=2"), std::string::npos) << cluster.daemon_log();
}

}  // namespace
}  // namespace trainyard::testing
