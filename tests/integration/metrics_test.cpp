// GET /metrics of a real daemon with real agents and jobs: who may scrape it, and Prometheus's own
// `promtool check metrics` accepts the scrape; every metric the deploy/ alert rules and Grafana
// board use is in it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "cli/http_client.h"
#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

struct Scrape {
  int status = 0;
  std::string body;
};

Scrape scrape(const Cluster& cluster, const std::string& token) {
  auto client = cli::make_http_client(cli::parse_server_url(cluster.url()));
  cli::HttpRequest req{.method = "GET", .target = "/metrics"};
  if (!token.empty()) req.headers.emplace("authorization", "Bearer " + token);
  const auto result = client->send(req);
  if (!result) {
    ADD_FAILURE() << "GET /metrics: " << result.error().message;
    return {};
  }
  const cli::HttpResponse& resp = *result;
  return {resp.status, resp.body};
}

std::string token_for(Cluster& cluster, const std::string& user, const std::string& role) {
  const ApiResult r = cluster.api("POST", "/v1/tokens", Json{{"user", user}, {"role", role}}.dump());
  EXPECT_EQ(r.status, 201) << r.body.dump();
  return r.body.value("token", "");
}

bool have_promtool() { return std::system("command -v promtool > /dev/null 2>&1") == 0; }

// Runs `promtool check metrics` over `text`; returns its exit status and output.
std::pair<int, std::string> promtool_check(const std::string& dir, const std::string& text) {
  const std::string input = dir + "/scrape.txt";
  std::ofstream(input) << text;
  const std::string command = "promtool check metrics < " + input + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string output;
  char buffer[4096];
  while (pipe && std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
  const int status = pipe ? ::pclose(pipe) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

// The repository's deploy/ folder: above the test binary (build/tests/integration/).
fs::path deploy_dir() {
  for (fs::path p = fs::read_symlink("/proc/self/exe").parent_path(); p.has_relative_path(); p = p.parent_path()) {
    if (fs::exists(p / "deploy/prometheus/trainyard-alerts.yml")) return p / "deploy";
  }
  return {};
}

// Families in a scrape (its TYPE lines).
std::set<std::string> families(const std::string& text) {
  std::set<std::string> out;
  static const std::regex type_line(R"(# TYPE (\S+) )");
  for (std::sregex_iterator it(text.begin(), text.end(), type_line), end; it != end; ++it) out.insert((*it)[1]);
  return out;
}

TEST(Metrics, ARealScrapePassesPromtoolAndHoldsEveryFamilyTheDeployFilesUse) {
  Cluster cluster;
  cluster.start_daemon();
  cluster.start_agent("node-a");
  cluster.start_agent("node-b");
  cluster.wait_for_nodes(2);
  ASSERT_EQ(cluster.api("PUT", "/v1/shares/team.vision-1", R"({"weight":2})").status, 200);
  const std::int64_t ok = cluster.submit({{"name", "secret-project-x"},
                                          {"share", "team.vision-1"},
                                          {"nodes", 2},
                                          {"kind", "simulated"},
                                          {"workload", {{"steps", 5}}}});
  const std::int64_t failing =
      cluster.submit({{"name", "fails"}, {"nodes", 1}, {"command", {{"argv", {"/bin/false"}}}}});
  cluster.wait_job_state(ok, "SUCCEEDED", 60s);
  cluster.wait_job_state(failing, "FAILED", 30s);
  const std::string viewer = token_for(cluster, "vic", "viewer");

  // The ended jobs' goodput is read from the store every 20 ticks (of 50 ms here).
  Scrape s;
  EXPECT_TRUE(eventually(
      [&] {
        s = scrape(cluster, viewer);
        return s.body.find("trainyard_goodput_core_seconds_total{category=\"productive\"} 0\n") == std::string::npos;
      },
      20s))
      << "no productive goodput was accounted";
  ASSERT_EQ(s.status, 200);
  EXPECT_THAT(s.body, HasSubstr("trainyard_jobs_ended_total{state=\"SUCCEEDED\",share=\"team.vision-1\"} 1\n"));
  EXPECT_THAT(s.body, HasSubstr("trainyard_nodes{state=\"HEALTHY\"} 2\n"));
  EXPECT_THAT(s.body, HasSubstr("trainyard_agents_connected 2\n"));
  EXPECT_THAT(s.body, HasSubstr("trainyard_http_requests_total{method=\"POST\",route=\"/v1/jobs\",status=\"201\"} 2\n"));
  EXPECT_THAT(s.body, HasSubstr("trainyard_attempt_failures_total{class=\"user_error\",infrastructure=\"false\",share=\"default\"} 1\n"));
  EXPECT_THAT(s.body, HasSubstr("trainyard_node_state{node=\"node-a\",state=\"HEALTHY\"} 1\n"));
  EXPECT_THAT(s.body, HasSubstr("trainyard_node_cores_allocated{node=\"node-b\"} 0\n"));
  EXPECT_THAT(s.body, Not(HasSubstr("secret-project-x")));
  // The README's metrics table lists every family served.
  std::ifstream readme(std::string(TRAINYARD_SOURCE_DIR) + "/README.md");
  const std::string documented((std::istreambuf_iterator<char>(readme)), std::istreambuf_iterator<char>());
  const std::set<std::string> served = families(s.body);
  for (const std::string& family : served) {
    EXPECT_NE(documented.find("| `" + family + "` |"), std::string::npos) << "README.md's metrics table lacks " << family;
  }
  EXPECT_GE(served.size(), 20u);

  if (!have_promtool()) {
    GTEST_SKIP() << "promtool is missing (Debian package prometheus; deploy/install-deps.sh installs it): the scrape "
                    "was not checked by Prometheus's own linter";
  }
  const auto [status, output] = promtool_check(cluster.dir(), s.body);
  EXPECT_EQ(status, 0) << output;
  EXPECT_EQ(output, "") << "promtool found problems";

  const fs::path deploy = deploy_dir();
  ASSERT_FALSE(deploy.empty()) << "deploy/ not found above the test binary";
  const std::set<std::string> scraped = families(s.body);
  static const std::regex metric_name(R"(trainyard_[a-z_]+)");
  for (const char* file : {"prometheus/trainyard-alerts.yml", "grafana/trainyard.json"}) {
    const std::string text = read_text((deploy / file).string());
    ASSERT_FALSE(text.empty()) << file;
    for (std::sregex_iterator it(text.begin(), text.end(), metric_name), end; it != end; ++it) {
      std::string name = it->str();
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        if (name.ends_with(suffix) && !scraped.contains(name)) name.resize(name.size() - std::string(suffix).size());
      }
      EXPECT_TRUE(scraped.contains(name)) << file << " uses " << it->str() << ", which the daemon does not expose";
    }
  }
}

TEST(Metrics, ViewersOperatorsAndAdminsMayScrapeUsersMayNotAndPublicNeedsNoToken) {
  Cluster cluster;
  cluster.start_daemon();
  EXPECT_EQ(scrape(cluster, cluster.admin_token()).status, 200);
  EXPECT_EQ(scrape(cluster, token_for(cluster, "olga", "operator")).status, 200);
  EXPECT_EQ(scrape(cluster, token_for(cluster, "vic", "viewer")).status, 200);
  EXPECT_EQ(scrape(cluster, token_for(cluster, "alice", "user")).status, 403);
  EXPECT_EQ(scrape(cluster, "").status, 401);

  cluster.kill_daemon(SIGTERM);
  cluster.start_daemon({"--metrics-public"});
  const Scrape open = scrape(cluster, "");
  EXPECT_EQ(open.status, 200);
  EXPECT_THAT(open.body, HasSubstr("# TYPE trainyard_nodes gauge\n"));
  EXPECT_EQ(cluster.api("GET", "/v1/jobs", "", kNoToken).status, 401) << "only /metrics is public";
}

// The overview's history (GET /v1/cluster/history) counts what the Prometheus counters count, from
// samples the daemon stored, which a restart keeps.
TEST(Metrics, TheClusterHistoryCountsWhatTheCountersCountAndOutlivesARestart) {
  Cluster cluster;
  cluster.start_daemon({"--history-interval-s", "1"});
  cluster.start_agent("node-a");
  cluster.start_agent("node-b");
  cluster.wait_for_nodes(2);
  const std::int64_t ok =
      cluster.submit({{"name", "ok"}, {"nodes", 2}, {"kind", "simulated"}, {"workload", {{"steps", 5}}}});
  const std::int64_t failing = cluster.submit({{"name", "fails"}, {"nodes", 1}, {"command", {{"argv", {"/bin/false"}}}}});
  cluster.wait_job_state(ok, "SUCCEEDED", 60s);
  cluster.wait_job_state(failing, "FAILED", 30s);
  // One that runs until it is cancelled, so samples see its cores held.
  const std::int64_t held = cluster.submit({{"name", "held"}, {"nodes", 1}, {"command", {{"argv", {"/bin/sleep", "600"}}}}});
  cluster.wait_job_state(held, "RUNNING", 30s);

  struct Totals {
    std::int64_t started = 0, user_errors = 0;
    double ended_core_s = 0, most_allocated = 0, most_total = 0;
  };
  const auto totals_of = [](const Json& body) {
    Totals t;
    for (const Json& b : body["buckets"]) {
      t.started += b.value("started_attempts", std::int64_t{0});
      t.user_errors += b["failed_attempts"].value("user_error", std::int64_t{0});
      t.ended_core_s += b.value("ended_core_s", 0.0);
      t.most_allocated = std::max(t.most_allocated, b.value("allocated_cores", 0.0));
      t.most_total = std::max(t.most_total, b.value("total_cores", 0.0));
    }
    return t;
  };
  Json history;
  Totals t;
  // Goodput is accounted every 20 ticks, and a sample is taken every second after that.
  EXPECT_TRUE(eventually(
      [&] {
        history = cluster.api("GET", "/v1/cluster/history?window=1h").body;
        t = totals_of(history);
        return t.started >= 3 && t.user_errors == 1 && t.ended_core_s > 0 && t.most_allocated > 0;
      },
      30s))
      << history.dump();
  EXPECT_EQ(history["sample_interval_s"], 1);
  EXPECT_EQ(t.started, 3) << "one attempt of each job";
  EXPECT_GT(t.most_total, 0);
  ASSERT_EQ(cluster.api("POST", "/v1/jobs/" + std::to_string(held) + "/cancel").status, 200);
  cluster.wait_job_state(held, "CANCELLED", 30s);

  cluster.kill_daemon(SIGTERM);
  cluster.start_daemon({"--history-interval-s", "1"});
  const Json after = cluster.api("GET", "/v1/cluster/history?window=1h").body;
  ASSERT_FALSE(after["buckets"].empty());
  EXPECT_EQ(after["buckets"][0]["at"], history["buckets"][0]["at"]) << "the samples from before the restart are kept";
  EXPECT_EQ(totals_of(after).started, t.started) << "counted once, though the counters restart at zero";
}

}  // namespace
}  // namespace trainyard::testing
