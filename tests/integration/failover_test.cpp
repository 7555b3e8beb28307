// Active / standby daemons on one PostgreSQL, with agents and the CLI given both URLs
// (docs/DESIGN.md "Clients that fail over"): kill -9 of the active daemon -> the standby is active
// within 10 s, the running jobs finish without a retry, every acknowledged submit is still there, no
// attempt runs twice, and the CLI keeps working, a `logs --follow` started before the kill included.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>

#include "tests/integration/cluster.h"
#include "tests/support/postgres_server.h"

namespace trainyard::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto kLeaseTtl = 3000ms;

// Every process of the PostgreSQL server whose socket directory `url` names: the postmaster (started
// with -D <that directory>/data) and the backends and workers it forked.
std::vector<pid_t> postgres_processes(const std::string& url) {
  const auto host = url.find("host=");
  const std::string dir = url.substr(host + 5, url.find('&', host) - host - 5);
  const auto cmdline_of = [](const fs::path& proc) {
    std::ifstream in(proc / "cmdline");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::replace(text.begin(), text.end(), '\0', ' ');
    return text;
  };
  const auto parent_of = [](const fs::path& proc) {
    std::ifstream in(proc / "status");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("PPid:", 0) == 0) return static_cast<pid_t>(std::stol(line.substr(5)));
    }
    return pid_t{-1};
  };
  pid_t postmaster = -1;
  std::vector<fs::path> all;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    all.push_back(entry.path());
    if (cmdline_of(entry.path()).find("-D " + dir + "/data") != std::string::npos) postmaster = std::stoi(name);
  }
  std::vector<pid_t> found;
  if (postmaster < 0) return found;
  found.push_back(postmaster);
  for (const auto& proc : all) {
    if (parent_of(proc) == postmaster) found.push_back(static_cast<pid_t>(std::stol(proc.filename().string())));
  }
  return found;
}

struct Daemon {
  std::string url;
  std::string data;  // its data dir: the token files are the first daemon's
  std::unique_ptr<Process> process;
  std::unique_ptr<cli::HttpClient> client;
};

class Failover : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = PostgresServer::unavailable()) GTEST_SKIP() << *why;
    postgres = std::make_unique<PostgresServer>(PostgresServer::Options{});
    store = postgres->fresh_store_url();
    first.data = cluster.dir() + "/data";  // where Cluster's agents find the join token
    second.data = cluster.dir() + "/data-b";
  }

  // Agents come back within their reconnect backoff (up to 5 s) of a take-over. Fencing across a
  // take-over is not what the kill -9 test measures: with the default 10 s kill grace, a 10 s node
  // timeout leaves it no room.
  static std::vector<std::string> unfenced() { return {"--node-timeout-ms", "10000", "--fence-ms", "0"}; }

  void start(Daemon& daemon, const std::string& log, const std::vector<std::string>& liveness = unfenced(),
             std::chrono::milliseconds lease_ttl = kLeaseTtl) {
    const std::string listen = "127.0.0.1:" + std::to_string(unused_loopback_port());
    daemon.url = "http://" + listen;
    std::vector<std::string> argv{TRAINYARD_DAEMON_BIN, "--listen", listen, "--advertise-url", daemon.url, "--data-dir",
                                  daemon.data, "--store", store, "--lease-ttl-ms", std::to_string(lease_ttl.count()),
                                  "--heartbeat-interval-ms", "100", "--tick-ms", "50", "--retry-backoff-ms", "50"};
    argv.insert(argv.end(), liveness.begin(), liveness.end());
    daemon.process = std::make_unique<Process>(argv, cluster.dir() + "/" + log);
    daemon.client = cli::make_http_client(cli::parse_server_url(daemon.url));
  }

  // Starts the active daemon, then a standby presenting the same tokens (the store holds only their hashes).
  void start_pair(const std::vector<std::string>& liveness = unfenced()) {
    start(first, "daemon-a.log", liveness);
    ASSERT_TRUE(eventually([&] { return role(first) == "active"; }, 20s)) << read_text(cluster.dir() + "/daemon-a.log");
    fs::create_directories(second.data);
    fs::permissions(second.data, fs::perms::owner_all);
    for (const char* file : {"admin.token", "join.token"}) fs::copy_file(first.data + "/" + file, second.data + "/" + file);
    start(second, "daemon-b.log", liveness);
    ASSERT_TRUE(eventually([&] { return role(second) == "standby"; }, 20s)) << read_text(cluster.dir() + "/daemon-b.log");
  }

  // Whether `count` nodes are HEALTHY and connected to `daemon`, within 20 s.
  bool nodes_on(Daemon& daemon, int count) {
    return eventually(
        [&] {
          const auto nodes = api(daemon, "GET", "/v1/nodes");
          int ready = 0;
          for (const auto& n : nodes.body["nodes"]) ready += n["state"] == "HEALTHY" && n["connected"] == true;
          return ready == count;
        },
        20s);
  }

  // What the daemon's /healthz says it is: "active", "standby", or "" when it does not answer.
  static std::string role(Daemon& daemon) {
    const auto result = daemon.client->send({.method = "GET", .target = "/healthz"});
    if (!result || result->status != 200) return "";
    const Json body = Json::parse(result->body, nullptr, false);
    return body.is_object() && body.contains("role") ? body["role"].get<std::string>() : "";
  }

  ApiResult api(Daemon& daemon, const std::string& method, const std::string& target, const Json& body = {}) {
    cli::HttpRequest request{.method = method, .target = target};
    request.headers = {{"authorization", "Bearer " + read_text(first.data + "/admin.token")}};
    if (!body.is_null()) {
      request.headers.emplace("content-type", "application/json");
      request.body = body.dump();
    }
    const auto result = daemon.client->send(request);
    if (!result) return {};
    return {result->status, Json::parse(result->body, nullptr, false)};
  }

  // The CLI names the standby first: its requests start with a redirect to the active daemon.
  std::string cli_command(const std::string& args) const {
    return std::string(TRAINYARD_CLI_BIN) + " --server " + second.url + "," + first.url + " --token-file " + first.data +
           "/admin.token " + args;
  }
  // Runs the CLI with both URLs; its exit status, with stdout and stderr in `output`.
  int cli(const std::string& args) {
    const std::string out = cluster.dir() + "/cli.out";
    const int status = std::system((cli_command(args) + " > " + out + " 2>&1").c_str());
    output = read_text(out);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::unique_ptr<PostgresServer> postgres;
  std::string store;
  Cluster cluster;
  Daemon first;
  Daemon second;
  std::string output;
};

TEST_F(Failover, KillingTheActiveDaemonHandsTheClusterToTheStandbyWithoutLosingWork) {
  ASSERT_NO_FATAL_FAILURE(start_pair());

  // One agent lists the active daemon first, the other the standby (which redirects it).
  cluster.start_agent("node-a", {.server = first.url + "," + second.url});
  cluster.start_agent("node-b", {.server = second.url + "," + first.url});
  const auto both_nodes_on = [&](Daemon& daemon) { return nodes_on(daemon, 2); };
  ASSERT_TRUE(both_nodes_on(first));

  // Two jobs hold until the gate opens; each notes its attempt as it starts.
  const std::string gate = cluster.shared_dir() + "/gate";
  std::vector<std::int64_t> running;
  for (const char* name : {"across-a", "across-b"}) {
    const std::string script = "echo $TRAINYARD_ATTEMPT_ID >> " + cluster.shared_dir() +
                               "/starts-$TRAINYARD_JOB_ID; while [ ! -f " + gate + " ]; do sleep 0.05; done";
    ASSERT_EQ(cli("submit --cores-per-node 1 --name " + std::string(name) + " -- /bin/sh -c '" + script + "'"), 0) << output;
    running.push_back(std::stoll(output.substr(output.rfind(' ') + 1)));
  }
  std::map<std::int64_t, std::string> acknowledged;  // id -> name; they need 3 nodes, so stay PENDING
  for (int i = 0; i < 20; ++i) {
    const Json spec = {{"name", "pending-" + std::to_string(i)},
                       {"nodes", 3},
                       {"wait_for_capacity", true},
                       {"command", {{"argv", {"/bin/true"}}}}};
    const ApiResult r = api(first, "POST", "/v1/jobs", spec);
    ASSERT_EQ(r.status, 201) << r.body.dump();
    acknowledged[r.body["id"].get<std::int64_t>()] = spec["name"];
  }
  for (const auto id : running) {
    ASSERT_TRUE(eventually([&] { return api(first, "GET", "/v1/jobs/" + std::to_string(id)).body["state"] == "RUNNING"; },
                           20s));
  }
  // Follows the first job's log across the failover, to the job's end.
  Process follower({"/bin/sh", "-c", cli_command("logs " + std::to_string(running[0]) + " --follow")},
                   cluster.dir() + "/follow.log");

  first.process->signal(SIGKILL);
  first.process->wait_exit(10s);
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually([&] { return role(second) == "active"; }, 10s))
      << "the standby did not take over within 10 s:\n" << read_text(cluster.dir() + "/daemon-b.log");
  std::cout << "failover took "
            << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - killed).count()
            << " ms\n";

  // The CLI with both URLs reaches the new active daemon; what was acknowledged is there.
  for (const auto& [id, name] : acknowledged) {
    const ApiResult r = api(second, "GET", "/v1/jobs/" + std::to_string(id));
    ASSERT_EQ(r.status, 200) << "job " << id << " was acknowledged but is gone";
    EXPECT_EQ(r.body["name"], name);
    EXPECT_EQ(r.body["state"], "PENDING") << id;
  }
  ASSERT_EQ(cli("job " + std::to_string(acknowledged.begin()->first) + " --json"), 0) << output;
  EXPECT_NE(output.find("pending-0"), std::string::npos) << output;

  // The agents reconnect to the new active daemon and report their running attempts; the jobs finish.
  ASSERT_TRUE(both_nodes_on(second)) << read_text(cluster.dir() + "/daemon-b.log");
  { std::ofstream(gate) << "go"; }
  for (const auto id : running) {
    Json job;
    ASSERT_TRUE(eventually(
        [&] {
          job = api(second, "GET", "/v1/jobs/" + std::to_string(id)).body;
          return job["state"] == "SUCCEEDED";
        },
        30s))
        << job.dump(2) << "\n" << read_text(cluster.dir() + "/daemon-b.log");
    EXPECT_EQ(job["attempts"], 1) << job.dump(2);
    EXPECT_EQ(job["infra_retries"], 0) << job.dump(2);
    // Fencing: the attempt ran once, on one node, and nothing started it again.
    EXPECT_EQ(read_text(cluster.shared_dir() + "/starts-" + std::to_string(id)).find('\n'), std::string::npos)
        << "job " << id << " started more than once";
  }
  EXPECT_EQ(follower.wait_exit(20s), std::optional<int>(0)) << read_text(cluster.dir() + "/follow.log");

  // A new job, submitted and waited for with both URLs, runs under the new active daemon.
  EXPECT_EQ(cli("submit --wait -- /bin/true"), 0) << output;
}

// A paused active daemon (SIGSTOP: a VM stall) keeps its TCP connections open, so only an
// application-level answer shows it is gone. Its agents leave it at half their fence time, reach
// the standby once it took over, and keep their attempts running: the freeze costs no attempt.
TEST_F(Failover, AFrozenActiveDaemonLosesItsAgentsToTheStandbyWithTheirAttemptsRunning) {
  // Fencing on: 12 s node timeout - 1 s kill grace - 1.2 s margin = a 9.8 s fence; agents leave a
  // silent daemon after 4.9 s, past the 3.6 s a take-over takes at most.
  ASSERT_NO_FATAL_FAILURE(start_pair({"--node-timeout-ms", "12000", "--kill-grace-ms", "1000"}));
  cluster.start_agent("node-a", {.server = first.url + "," + second.url});
  ASSERT_TRUE(nodes_on(first, 1));
  const std::string gate = cluster.shared_dir() + "/gate";
  const std::string starts = cluster.shared_dir() + "/starts";
  const std::string script = "echo $TRAINYARD_ATTEMPT_ID >> " + starts + "; while [ ! -f " + gate + " ]; do sleep 0.05; done";
  const ApiResult submitted = api(first, "POST", "/v1/jobs",
                                  Json{{"name", "through-a-freeze"}, {"command", {{"argv", {"/bin/sh", "-c", script}}}}});
  ASSERT_EQ(submitted.status, 201) << submitted.body.dump();
  const std::string job_path = "/v1/jobs/" + std::to_string(submitted.body["id"].get<std::int64_t>());
  ASSERT_TRUE(eventually([&] { return api(first, "GET", job_path).body["state"] == "RUNNING"; }, 20s));

  first.process->signal(SIGSTOP);
  const auto frozen = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually([&] { return role(second) == "active"; }, 15s)) << read_text(cluster.dir() + "/daemon-b.log");
  ASSERT_TRUE(nodes_on(second, 1)) << "the agent stayed with the frozen daemon:\n"
                                   << read_text(cluster.dir() + "/agent-node-a.log");
  std::cout << "[ figures ] agent on the new active daemon "
            << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - frozen).count()
            << " ms after the active one froze (lease ttl 3000 ms, fence 9800 ms)\n";
  const Json during = api(second, "GET", job_path).body;
  EXPECT_EQ(during["state"], "RUNNING") << during.dump(2);

  // Woken, the old daemon finds its lease gone and exits without acting on what it slept through.
  first.process->signal(SIGCONT);
  const std::optional<int> status = first.process->wait_exit(20s);
  ASSERT_TRUE(status) << "the woken daemon kept running without its lease";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 3) << *status;
  const std::string woken_log = read_text(cluster.dir() + "/daemon-a.log");
  EXPECT_NE(woken_log.find("event=lease_lost"), std::string::npos) << woken_log;
  EXPECT_EQ(woken_log.find("event=node_down"), std::string::npos) << woken_log;

  { std::ofstream(gate) << "go"; }
  Json job;
  ASSERT_TRUE(eventually(
      [&] {
        job = api(second, "GET", job_path).body;
        return job["state"] == "SUCCEEDED";
      },
      30s))
      << job.dump(2) << "\n" << read_text(cluster.dir() + "/daemon-b.log");
  EXPECT_EQ(job["attempts"], 1) << job.dump(2);
  EXPECT_EQ(job["infra_retries"], 0) << job.dump(2);
  EXPECT_EQ(read_text(starts).find('\n'), std::string::npos) << "started more than once:\n" << read_text(starts);
  const std::string agent_log = read_text(cluster.dir() + "/agent-node-a.log");
  EXPECT_NE(agent_log.find("event=daemon_unanswering"), std::string::npos) << agent_log;
  EXPECT_EQ(agent_log.find("event=fenced"), std::string::npos) << agent_log;
}

}  // namespace
}  // namespace trainyard::testing

namespace trainyard::testing {
namespace {

// The active daemon's store stops answering (every PostgreSQL process frozen: a cut-off that leaves
// connections open). /healthz says so, 503 with why, before the lease could pass to a standby; when
// the store answers again within the lease, the daemon carries on as the active one.
TEST_F(Failover, AnActiveDaemonWhoseStoreStopsAnsweringSaysSoInHealthzUntilItAnswers) {
  // A 6 s lease, renewed every 1.2 s: degraded after 2.4 s unconfirmed, lost after 4.8 s at the soonest.
  start(first, "daemon-a.log", unfenced(), 6000ms);
  ASSERT_TRUE(eventually([&] { return role(first) == "active"; }, 20s)) << read_text(cluster.dir() + "/daemon-a.log");
  const std::vector<pid_t> processes = postgres_processes(postgres->url());
  ASSERT_GE(processes.size(), 2u) << "the postmaster and the daemon's backend";
  for (const pid_t pid : processes) ::kill(pid, SIGSTOP);
  std::string said;
  const bool degraded = eventually(
      [&] {
        const auto answer = first.client->send({.method = "GET", .target = "/healthz"});
        if (answer && answer->status == 503) said = answer->body;
        return !said.empty();
      },
      4500ms);
  // The tick logs the episode; the store stays frozen until it has (the lease lasts 2.4 s longer).
  const bool logged = degraded && eventually(
      [&] { return read_text(cluster.dir() + "/daemon-a.log").find("event=store_unreachable") != std::string::npos; },
      2000ms);
  for (const pid_t pid : processes) ::kill(pid, SIGCONT);
  ASSERT_TRUE(degraded) << read_text(cluster.dir() + "/daemon-a.log");
  EXPECT_TRUE(logged) << read_text(cluster.dir() + "/daemon-a.log");
  EXPECT_NE(said.find("\"status\":\"degraded\""), std::string::npos) << said;
  EXPECT_NE(said.find("the store confirmed no lease renewal for"), std::string::npos) << said;
  EXPECT_TRUE(eventually([&] { return role(first) == "active"; }, 10s)) << "answering again, still active";
  // The next tick logs the recovery.
  EXPECT_TRUE(eventually(
      [&] { return read_text(cluster.dir() + "/daemon-a.log").find("event=store_reachable_again") != std::string::npos; },
      5s));
  const std::string log = read_text(cluster.dir() + "/daemon-a.log");
  EXPECT_EQ(log.find("event=lease_lost"), std::string::npos) << log;
}

}  // namespace
}  // namespace trainyard::testing
