// Hostile jobs and clients: what one user's job or a forged client does must not take
// an agent or the daemon down, nor reach another user's work.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <sstream>
#include <thread>

#include "net/ws_client.h"
#include "proto/messages.h"
#include "tests/integration/cluster.h"
#include "tests/integration/host_network.h"
#include "tests/integration/raw_connection.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

pid_t read_pid(const std::string& path) {
  const std::string text = read_text(path);
  return text.empty() ? 0 : static_cast<pid_t>(std::stol(text));
}

// What a forged agent sends back to one message of the daemon's: a raw frame, or nothing.
using ForgedAnswer = std::function<std::optional<std::string>(const DaemonMessage&)>;

// A hand-made agent connection: says `hello` with `token`, answers what `answer` says to, and
// collects what the daemon sends until `enough` holds, the connection closes, or `timeout` passes.
std::vector<DaemonMessage> forged_agent(const Cluster& cluster, const std::string& token, const HelloMsg& hello,
                                        const std::function<bool(const std::vector<DaemonMessage>&)>& enough,
                                        std::chrono::milliseconds timeout, const ForgedAnswer& answer = {}) {
  boost::asio::io_context io;
  std::vector<DaemonMessage> got;
  std::shared_ptr<net::WebSocketClient> link;
  net::WebSocketClientHandlers handlers;
  handlers.on_open = [&] { link->send(encode(AgentMessage{hello})); };
  handlers.on_message = [&](std::string text) {
    got.push_back(parse_daemon_message(text));
    if (answer) {
      if (std::optional<std::string> frame = answer(got.back())) link->send(std::move(*frame));
    }
    if (enough(got)) io.stop();
  };
  handlers.on_closed = [&](const std::string&) { io.stop(); };
  link = net::WebSocketClient::connect(io, cluster.url() + "/v1/agent/connect", {{"Authorization", "Bearer " + token}},
                                       std::move(handlers));
  io.run_for(timeout);
  return got;
}

HelloMsg forged_hello(const std::string& name, std::vector<AttemptReport> attempts = {}) {
  HelloMsg hello;
  hello.agent_version = "forged";
  hello.name = name;
  hello.cores = 4;
  hello.data_addr = "127.0.0.1:9";
  hello.attempts = std::move(attempts);
  return hello;
}

template <typename T>
std::vector<T> all_of_type(const std::vector<DaemonMessage>& messages) {
  std::vector<T> out;
  for (const auto& m : messages) {
    if (const auto* t = std::get_if<T>(&m)) out.push_back(*t);
  }
  return out;
}

// User plus system CPU time the process has used so far.
std::chrono::milliseconds cpu_time(pid_t pid) {
  std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // after "pid (comm) "
  std::string field;
  long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {  // fields 14 and 15 of proc(5)
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  return std::chrono::milliseconds((utime + stime) * 1000 / ::sysconf(_SC_CLK_TCK));
}

bool healthz_answers(const std::string& url) {
  cli::HttpClientOptions options;
  options.connect_timeout = 1s;
  options.request_timeout = 1s;
  const auto result = cli::make_http_client(cli::parse_server_url(url), options)->send({.method = "GET", .target = "/healthz"});
  return result && result->status == 200;
}

class Hostile : public ::testing::Test {
 protected:
  void SetUp() override {
    // A secret in the agent's environment, which no job may see.
    ::setenv("TRAINYARD_TEST_SECRET", "do-not-leak-4f2a", 1);
    cluster.start_daemon();
    cluster.start_agent("node-a");
    cluster.wait_for_nodes(1);
    ::unsetenv("TRAINYARD_TEST_SECRET");
  }
  Cluster cluster;
};

TEST_F(Hostile, InvalidUtf8AndHugeOutputDoNotTakeTheAgentDown) {
  // A stray 0xFF, a euro sign split across the 4 KiB exit tail by a progress bar without newlines,
  // and 24 MiB of random bytes before it.
  const auto id = cluster.submit(shell_job(
      "binary-output",
      "printf 'hello\\377\\n'; head -c 25165824 /dev/urandom; printf '\\n'; "
      "i=0; while [ $i -lt 1500 ]; do printf '\\r\\342\\202\\254%d' $i; i=$((i+1)); done; printf 'tail \\377 end\\n'"));
  const Json job = cluster.wait_job_state(id, "SUCCEEDED", 120s);
  EXPECT_EQ(job["exit_code"], 0) << job.dump(2);
  EXPECT_TRUE(cluster.agent("node-a").running());
  const auto logs = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/logs");
  ASSERT_EQ(logs.status, 200) << logs.body.dump();
  const std::string text = logs.body["logs"][0]["text"];
  EXPECT_NE(text.find("tail \xEF\xBF\xBD end"), std::string::npos);  // the 0xFF, replaced
  // The node is still connected and takes the next job.
  const auto next = cluster.submit(shell_job("after", "echo fine"));
  cluster.wait_job_state(next, "SUCCEEDED", 30s);
}

TEST_F(Hostile, AJobSeesNoneOfTheAgentsEnvironmentAndTheDaemonsFilesArePrivate) {
  const auto id = cluster.submit(shell_job("env", "env"));
  cluster.wait_job_state(id, "SUCCEEDED", 30s);
  const std::string text = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/logs").body["logs"][0]["text"];
  EXPECT_NE(text.find("RANK=0"), std::string::npos) << text;
  EXPECT_EQ(text.find("TRAINYARD_TEST_SECRET"), std::string::npos) << text;
  EXPECT_EQ(text.find("do-not-leak"), std::string::npos) << text;

  const auto mode = [](const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 0777;
  };
  EXPECT_EQ(mode(cluster.dir() + "/data"), 0711u);  // jobs traverse it to their checkpoints, never list it
  EXPECT_EQ(mode(cluster.dir() + "/data/trainyard.db"), 0600u);
  EXPECT_EQ(mode(cluster.dir() + "/data/admin.token"), 0600u);
  EXPECT_EQ(mode(cluster.attempt_dir("node-a", 1)), 0700u);
}

TEST_F(Hostile, AJobsProcessesDoNotOutliveAKilledAgent) {
  // The job's leader and a child it leaves in its process group record their pids, then wait.
  const std::string leader_file = cluster.shared_dir() + "/leader.pid";
  const std::string child_file = cluster.shared_dir() + "/child.pid";
  const auto id = cluster.submit(
      shell_job("orphan", "sleep 600 & echo $! > " + child_file + "; echo $$ > " + leader_file + "; wait"));
  cluster.wait_job_state(id, "RUNNING", 30s);
  ASSERT_TRUE(eventually([&] { return read_pid(leader_file) > 0 && read_pid(child_file) > 0; }, 30s));
  const pid_t leader = read_pid(leader_file), child = read_pid(child_file);

  cluster.stop_agent("node-a", SIGKILL);
  EXPECT_TRUE(eventually([&] { return !process_alive(leader); }, 20s)) << "the leader outlived its agent";

  // What the leader left in its group is killed by the agent's next life, before it takes work.
  cluster.start_agent("node-a");
  EXPECT_TRUE(eventually([&] { return !process_alive(child); }, 20s)) << "the child outlived the restart";
}

TEST_F(Hostile, AUserReachesNeitherTheSystemShareNorOtherUsersJobIdsNorTheDataPlane) {
  const std::string alice = cluster.api("POST", "/v1/tokens", R"({"user":"alice"})").body["token"];
  const std::string bob = cluster.api("POST", "/v1/tokens", R"({"user":"bob"})").body["token"];
  auto submit_to = [&](const std::string& share) {
    Json spec = shell_job("x", "true");
    spec["share"] = share;
    return cluster.api("POST", "/v1/jobs", spec.dump(), alice);
  };
  // Canaries are served first from `system`; nobody else may queue there, nor invent a share.
  const auto system = submit_to("system");
  EXPECT_EQ(system.status, 403) << system.body.dump();
  EXPECT_EQ(system.body["error"]["field"], "share");
  const auto invented = submit_to("alices-own");
  EXPECT_EQ(invented.status, 400) << invented.body.dump();
  EXPECT_EQ(invented.body["error"]["field"], "share");

  // Another user's job answers exactly as one that does not exist.
  const auto id = cluster.submit(shell_job("bobs", "true"), bob);
  const auto missing = id + 1000;
  const auto other = cluster.api("GET", "/v1/jobs/" + std::to_string(id), "", alice);
  const auto none = cluster.api("GET", "/v1/jobs/" + std::to_string(missing), "", alice);
  EXPECT_EQ(other.status, 404);
  EXPECT_EQ(none.status, 404);
  Json expected = none.body;
  expected["error"]["message"] = "job " + std::to_string(id) + " does not exist";
  EXPECT_EQ(other.body, expected) << none.body.dump();

  // An encoded slash does not route.
  const auto encoded = cluster.api("GET", "/v1%2Fnodes", "", alice);
  EXPECT_EQ(encoded.status, 400) << encoded.body.dump();
  EXPECT_EQ(encoded.body["error"]["field"], "path");

  // The data plane's addresses are for admins.
  const auto admin_nodes = cluster.api("GET", "/v1/nodes");
  ASSERT_EQ(admin_nodes.body["nodes"].size(), 1u);
  EXPECT_FALSE(admin_nodes.body["nodes"][0].value("data_addr", "").empty()) << admin_nodes.body.dump();
  const auto user_nodes = cluster.api("GET", "/v1/nodes", "", alice);
  ASSERT_EQ(user_nodes.status, 200);
  ASSERT_EQ(user_nodes.body["nodes"].size(), 1u);
  EXPECT_FALSE(user_nodes.body["nodes"][0].contains("data_addr")) << user_nodes.body.dump();
}

TEST_F(Hostile, AForgedAgentWithTheJoinTokenCannotTakeAnExistingNodesPlace) {
  const auto id = cluster.submit(shell_job("victim", "sleep 600"));
  cluster.wait_job_state(id, "RUNNING", 30s);
  const std::string join_token = trimmed(read_text(cluster.dir() + "/data/join.token"));

  // A second trainyard-agent under the real node's name, with the join token.
  Process forger({TRAINYARD_AGENT_BIN, "--server", cluster.url(), "--join-token-file", cluster.dir() + "/data/join.token",
                  "--name", "node-a", "--cores", "4", "--work-dir", cluster.dir() + "/forger"},
                 cluster.dir() + "/agent-forger.log");
  const auto status = forger.wait_exit(30s);
  ASSERT_TRUE(status) << "the forged agent was not refused";
  EXPECT_EQ(WEXITSTATUS(*status), 3) << read_text(cluster.dir() + "/agent-forger.log");
  EXPECT_NE(read_text(cluster.dir() + "/agent-forger.log").find("node-a already has its own credential"), std::string::npos)
      << read_text(cluster.dir() + "/agent-forger.log");

  // A raw connection that then claims the job's exit is refused before it can say anything.
  const auto answers = forged_agent(cluster, join_token, forged_hello("node-a"), [](const auto& m) { return !m.empty(); }, 10s);
  ASSERT_EQ(answers.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<RefusedMsg>(answers[0]));
  // The admin token opens no agent connection at all.
  EXPECT_TRUE(forged_agent(cluster, cluster.admin_token(), forged_hello("node-a"), [](const auto& m) { return !m.empty(); }, 10s)
                  .empty());

  // The real node keeps its connection and its job, on its first attempt.
  const Json job = cluster.api("GET", "/v1/jobs/" + std::to_string(id)).body;
  EXPECT_EQ(job["state"], "RUNNING") << job.dump(2);
  const Json attempts = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts").body;
  EXPECT_EQ(attempts["attempts"].size(), 1u) << attempts.dump(2);
  const Json node = cluster.api("GET", "/v1/nodes/node-a").body;
  EXPECT_EQ(node["connected"], true) << node.dump(2);
  EXPECT_EQ(node["state"], "HEALTHY") << node.dump(2);

  // The real agent keeps its own credential, private, and uses it again after a restart.
  struct stat st {};
  ASSERT_EQ(::stat((cluster.dir() + "/agents/node-a/node.credential").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  cluster.api("POST", "/v1/jobs/" + std::to_string(id) + "/cancel");
  cluster.stop_agent("node-a", SIGKILL);
  cluster.start_agent("node-a");
  EXPECT_TRUE(eventually([&] { return cluster.api("GET", "/v1/nodes/node-a").body["connected"] == true; }, 30s))
      << read_text(cluster.dir() + "/agent-node-a.log");
}

TEST_F(Hostile, AForgedHelloListingAnInventedAttemptIsStillHealthChecked) {
  const std::string join_token = trimmed(read_text(cluster.dir() + "/data/join.token"));
  const auto answers = forged_agent(cluster, join_token, forged_hello("node-x", {AttemptReport{777, 1, 50, std::nullopt, ""}}),
                                    [](const auto& m) {
                                      return !all_of_type<KillMsg>(m).empty() && !all_of_type<HealthCheckMsg>(m).empty();
                                    },
                                    15s);
  const auto kills = all_of_type<KillMsg>(answers);
  ASSERT_EQ(kills.size(), 1u) << "the invented attempt was not fenced";
  EXPECT_EQ(kills[0].attempt_id, 777);
  EXPECT_EQ(all_of_type<HealthCheckMsg>(answers).size(), 1u) << "the node skipped its registration check";
  const Json node = cluster.api("GET", "/v1/nodes/node-x").body;
  EXPECT_NE(node["state"], "HEALTHY") << node.dump(2);
}

TEST_F(Hostile, FifosAndSymlinksAsCheckpointFilesDoNotHangTheDaemon) {
  // Named like checkpoint files: FIFOs, which block whoever opens them for reading, and symlinks.
  const auto id = cluster.submit(shell_job(
      "fifo-checkpoints",
      "d=$TRAINYARD_CHECKPOINT_DIR; mkdir -p $d/step-0000000001 $d/step-0000000002 $d/step-0000000003 && "
      "mkfifo $d/step-0000000001/manifest.json && ln -s /dev/zero $d/step-0000000002/manifest.json && "
      "mkfifo $d/step-0000000003/params.bin && "
      "echo '{\"files\":[{\"name\":\"params.bin\",\"bytes\":1,\"sha256\":\"00\"}]}' > $d/step-0000000003/manifest.json && "
      "ln -s $d/step-0000000001 $d/step-0000000004"));
  cluster.wait_job_state(id, "SUCCEEDED", 30s);

  const auto listed = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/checkpoints");
  ASSERT_EQ(listed.status, 200) << listed.body.dump();
  const Json checkpoints = listed.body["checkpoints"];
  ASSERT_EQ(checkpoints.size(), 3u) << "a symlinked step directory is not listed: " << checkpoints.dump(2);
  for (const auto& c : checkpoints) EXPECT_FALSE(c["valid"].get<bool>()) << c.dump();
  // Submits and reads still go through.
  const auto next = cluster.submit(shell_job("after", "echo fine"));
  cluster.wait_job_state(next, "SUCCEEDED", 30s);
}

TEST_F(Hostile, ACheckpointPlantedByAnotherUsersJobIsNotResumedFrom) {
  cluster.start_agent("node-b");
  cluster.wait_for_nodes(2);
  const auto token_for = [&](const std::string& user) {
    return cluster.api("POST", "/v1/tokens", Json{{"user", user}}.dump()).body["token"].get<std::string>();
  };
  const std::string alice = token_for("alice"), bob = token_for("bob");
  const auto victim = cluster.submit({{"name", "victim"},
                                      {"nodes", 1},
                                      {"kind", "simulated"},
                                      {"retry", {{"attempts", 2}}},
                                      {"workload", {{"steps", 400}, {"step_ms", 25}, {"checkpoint_every", 5}}}},
                                     alice);
  const std::string path = "/v1/jobs/" + std::to_string(victim);
  const auto recorded = [&] {
    std::vector<std::string> paths;
    const Json listed = cluster.api("GET", path + "/checkpoints", "", alice).body["checkpoints"];
    for (const auto& c : listed) {
      if (c["valid"].get<bool>() && !c["recorded_by_attempt"].is_null()) paths.push_back(c["path"]);
    }
    return paths;
  };
  ASSERT_TRUE(eventually([&] { return !recorded().empty(); }, 30s));

  // Bob's job tries to copy Alice's newest checkpoint to a newer step; running as its own account
  // (docs/DESIGN.md "Job accounts"), it cannot reach her checkpoint directory.
  const auto planter = cluster.submit(
      shell_job("planter",
                "v=$(dirname $TRAINYARD_CHECKPOINT_DIR)/job-" + std::to_string(victim) +
                    "; src=$(ls -d $v/step-* | tail -1); cp -r $src $v/.plant && mv $v/.plant $v/step-0000000399"),
      bob);
  cluster.wait_job_state(planter, "FAILED", 30s);
  // Where jobs share an account, the copy gets there (planted here for it): complete and
  // self-consistent, and still never resumed from.
  const fs::path victim_dir = cluster.checkpoint_dir(victim);
  fs::path newest;
  for (const auto& entry : fs::directory_iterator(victim_dir)) {
    if (entry.path().filename().string().starts_with("step-") && entry.path() > newest) newest = entry.path();
  }
  fs::copy(newest, victim_dir / ".plant", fs::copy_options::recursive);
  fs::rename(victim_dir / ".plant", victim_dir / "step-0000000399");
  const Json listed = cluster.api("GET", path + "/checkpoints", "", alice).body["checkpoints"];
  ASSERT_FALSE(listed.empty());
  EXPECT_EQ(listed.back()["step"], 399) << listed.dump(2);
  EXPECT_FALSE(listed.back()["valid"].get<bool>()) << listed.dump(2);
  EXPECT_NE(listed.back()["problem"].get<std::string>().find("not recorded"), std::string::npos) << listed.dump(2);

  // Alice's job loses its node and is retried on the other one.
  const std::string node = cluster.api("GET", path + "/attempts", "", alice).body["attempts"][0]["nodes"][0];
  cluster.stop_agent(node, SIGKILL);
  cluster.wait_job_state(victim, "SUCCEEDED", 60s);
  const Json attempts = cluster.api("GET", path + "/attempts", "", alice).body["attempts"];
  ASSERT_EQ(attempts.size(), 2u) << attempts.dump(2);
  ASSERT_TRUE(attempts[1].contains("resumed_from")) << attempts.dump(2);
  const std::string resumed = attempts[1]["resumed_from"];
  EXPECT_EQ(resumed.find("step-0000000399"), std::string::npos) << "resumed from Bob's planted checkpoint";
  EXPECT_NE(resumed.find("/job-" + std::to_string(victim) + "/step-"), std::string::npos) << resumed;
  EXPECT_NE(cluster.daemon_log().find("event=checkpoint_recorded job=" + std::to_string(victim)), std::string::npos);
}

TEST_F(Hostile, RunningOutOfDescriptorsNeitherSpinsNorFloodsTheLogAndServesAgainAfter) {
  // Leave the daemon a few descriptors more than it holds, then connect more clients than that.
  const pid_t daemon = cluster.daemon().pid();
  rlimit limit{};
  ASSERT_EQ(::prlimit(daemon, RLIMIT_NOFILE, nullptr, &limit), 0);
  limit.rlim_cur = open_descriptors(daemon) + 8;
  ASSERT_EQ(::prlimit(daemon, RLIMIT_NOFILE, &limit, nullptr), 0);
  std::vector<std::unique_ptr<RawConnection>> clients;
  for (int i = 0; i < 40; ++i) {
    clients.push_back(std::make_unique<RawConnection>(cluster.url()));
    ASSERT_TRUE(clients.back()->connected()) << "the kernel queues connections the daemon cannot accept";
  }
  ASSERT_TRUE(eventually([&] { return cluster.daemon_log().find("event=accept_failed") != std::string::npos; }, 20s))
      << "the daemon never ran out of descriptors";

  // Before the fix, the accept loop retried at once: a whole core and ~18 MB of log a second.
  const std::string log_path = cluster.dir() + "/daemon.log";
  const auto log_before = fs::file_size(log_path);
  const auto cpu_before = cpu_time(daemon);
  const std::chrono::milliseconds window = 3s;
  std::this_thread::sleep_for(window);  // a measurement window, not a wait for something to happen
  const auto cpu_used = cpu_time(daemon) - cpu_before;
  const auto log_growth = fs::file_size(log_path) - log_before;
  EXPECT_LT(cpu_used, window / 4) << "the daemon spins while out of descriptors";
  EXPECT_LT(log_growth, 16u * 1024) << "the daemon floods its log while out of descriptors";

  // Once the clients go, the descriptors come back and the daemon serves again.
  clients.clear();
  EXPECT_TRUE(eventually([&] { return healthz_answers(cluster.url()); }, 20s)) << cluster.daemon_log().substr(0, 4000);
  EXPECT_TRUE(cluster.agent("node-a").running());
}

TEST(HostileClients, TheDaemonTakesTheHardDescriptorLimitSoItsConnectionCapsDecide) {
  // Started from a shell's soft limit, as a daemon often is; the child inherits it.
  rlimit own{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &own), 0);
  const rlimit started_with{std::min<rlim_t>(own.rlim_max, 256), own.rlim_max};
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &started_with), 0);
  Cluster cluster;
  cluster.start_daemon();
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &own), 0);
  rlimit daemon{};
  ASSERT_EQ(::prlimit(cluster.daemon().pid(), RLIMIT_NOFILE, nullptr, &daemon), 0);
  EXPECT_EQ(daemon.rlim_cur, own.rlim_max);
}

TEST(HostileClients, OneAddressHoldsAtMostItsCapOfUnauthenticatedConnectionsItsOldestSilentOneGivingWay) {
  Cluster cluster;
  cluster.start_daemon({"--max-connections-per-ip", "3"});
  ASSERT_EQ(cluster.api("GET", "/v1/nodes").status, 200);  // the test's own connection is the admin's
  std::vector<std::unique_ptr<RawConnection>> admitted;
  for (int i = 0; i < 3; ++i) {
    admitted.push_back(std::make_unique<RawConnection>(cluster.url()));
    EXPECT_NE(admitted.back()->get_healthz(10s).find("200 OK"), std::string::npos) << "connection " << i;
  }
  RawConnection fourth(cluster.url());
  ASSERT_TRUE(fourth.connected());
  EXPECT_NE(fourth.get_healthz(10s).find("200 OK"), std::string::npos) << "the fourth was refused, not made room for";
  EXPECT_TRUE(admitted[0]->closed_by_server(10s)) << "the oldest silent connection was kept over the cap";
  EXPECT_TRUE(eventually(
      [&] { return cluster.daemon_log().find("event=connection_evicted for_remote=127.0.0.1") != std::string::npos; },
      10s))
      << cluster.daemon_log();
  // The others still work, and so does the admin's connection, which the cap does not count.
  EXPECT_NE(admitted[1]->get_healthz(10s).find("200 OK"), std::string::npos);
  EXPECT_EQ(cluster.api("GET", "/v1/nodes").status, 200);
}

// Limits: what one client or user sends cannot starve the others.

// Sends `client` one byte every 200 ms, calling `meanwhile` between bytes, until the server closes
// the connection (then: how long after `started`) or 10 s pass (nullopt).
std::optional<std::chrono::milliseconds> trickle_until_closed(RawConnection& client,
                                                              std::chrono::steady_clock::time_point started,
                                                              const std::function<void()>& meanwhile) {
  while (std::chrono::steady_clock::now() - started < 10s) {
    meanwhile();
    if (!client.send("a") || client.closed_by_server(200ms)) {
      return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    }
  }
  return std::nullopt;
}

TEST(HostileClients, ASlowLorisIsDisconnectedAfterTheHeaderTimeoutWhileOthersAreServed) {
  Cluster cluster;
  cluster.start_daemon({"--header-timeout-ms", "1000"});
  RawConnection loris(cluster.url());
  ASSERT_TRUE(loris.connected());
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(loris.send("GET /healthz HTTP/1.1\r\nHost: daemon\r\nX-Slow: "));
  const auto dropped_after = trickle_until_closed(loris, started, [&] {
    const auto asked = std::chrono::steady_clock::now();
    EXPECT_NE(RawConnection(cluster.url()).get_healthz(5s).find("200 OK"), std::string::npos);
    EXPECT_LT(std::chrono::steady_clock::now() - asked, 1s) << "another client waited on the slow one";
  });
  ASSERT_TRUE(dropped_after) << "a client trickling its header held the connection for 10 s";
  EXPECT_GE(*dropped_after, 900ms);
  EXPECT_LT(*dropped_after, 2500ms) << "the header timeout is 1 s";
  EXPECT_TRUE(eventually([&] { return cluster.daemon_log().find("event=request_timeout") != std::string::npos; }, 10s));
}

TEST(HostileClients, ASlowBodyIsDisconnectedAfterTheBodyTimeout) {
  Cluster cluster;
  cluster.start_daemon({"--body-timeout-ms", "1000"});
  RawConnection slow(cluster.url());
  ASSERT_TRUE(slow.send("POST /v1/jobs HTTP/1.1\r\nHost: daemon\r\nContent-Length: 100000\r\n\r\n"));
  const auto started = std::chrono::steady_clock::now();
  const auto dropped_after = trickle_until_closed(slow, started, [] {});
  ASSERT_TRUE(dropped_after) << "a client trickling its body held the connection for 10 s";
  EXPECT_GE(*dropped_after, 900ms);
  EXPECT_LT(*dropped_after, 2500ms) << "the body timeout is 1 s";
}

TEST(HostileClients, AnOversizedHeaderIsRefusedWith431) {
  Cluster cluster;
  cluster.start_daemon({"--max-header-bytes", "2048"});
  RawConnection client(cluster.url());
  ASSERT_TRUE(client.send("GET /healthz HTTP/1.1\r\nHost: daemon\r\nX-Big: " + std::string(4096, 'x') + "\r\n\r\n"));
  const std::string answer = client.read_until("}", 10s);
  EXPECT_NE(answer.find("HTTP/1.1 431"), std::string::npos) << answer;
  EXPECT_NE(answer.find("request header exceeds the limit of 2048 bytes"), std::string::npos) << answer;
  EXPECT_NE(RawConnection(cluster.url()).get_healthz(10s).find("200 OK"), std::string::npos);
}

std::string user_token(Cluster& cluster, const std::string& user) {
  return cluster.api("POST", "/v1/tokens", Json{{"user", user}}.dump()).body.value("token", "");
}

TEST(HostileClients, AUserOverTheRateLimitGets429WithRetryAfterAndAnAdminDoesNot) {
  Cluster cluster;
  cluster.start_daemon({"--rate-limit-rps", "1", "--rate-limit-burst", "3"});
  const std::string alice = user_token(cluster, "alice");
  ASSERT_FALSE(alice.empty());
  const std::string request = "GET /v1/jobs HTTP/1.1\r\nHost: daemon\r\nAuthorization: Bearer " + alice +
                              "\r\nConnection: close\r\n\r\n";
  std::string refused;
  for (int i = 0; i < 10 && refused.empty(); ++i) {
    RawConnection client(cluster.url());
    ASSERT_TRUE(client.send(request));
    const std::string answer = client.read_until("}", 10s);
    if (answer.find("HTTP/1.1 429") != std::string::npos) refused = answer;
  }
  ASSERT_FALSE(refused.empty()) << "ten requests at once from a user limited to bursts of 3 were all served";
  EXPECT_NE(refused.find("\r\nRetry-After: 1\r\n"), std::string::npos) << refused;
  EXPECT_NE(refused.find("--rate-limit-rps"), std::string::npos) << refused;
  for (int i = 0; i < 10; ++i) EXPECT_EQ(cluster.api("GET", "/v1/jobs").status, 200) << "the admin was limited";
}

TEST(HostileClients, AUserOverThePendingJobsCapIsRefusedNamingIt) {
  Cluster cluster;
  cluster.start_daemon({"--max-pending-per-user", "2"});
  const std::string alice = user_token(cluster, "alice");
  Json spec = shell_job("waits", "true");
  spec["wait_for_capacity"] = true;  // no nodes: every job stays pending
  cluster.submit(spec, alice);
  cluster.submit(spec, alice);
  const ApiResult refused = cluster.api("POST", "/v1/jobs", spec.dump(), alice);
  EXPECT_EQ(refused.status, 429) << refused.body.dump();
  EXPECT_NE(refused.body.dump().find("--max-pending-per-user 2"), std::string::npos) << refused.body.dump();
  for (int i = 0; i < 3; ++i) cluster.submit(spec);  // the admin's
}

// A PATCH body nested 150,000 deep (~300 KB, under the body limit) took the daemon down with one
// user request; it is a 400 naming the field, and the daemon serves on.
TEST_F(Hostile, AJsonBodyNestedDeeperThanTheLimitIs400AndTheDaemonLives) {
  const std::string alice = user_token(cluster, "alice");
  const std::string body = "{\"priority\":" + std::string(150'000, '[') + std::string(150'000, ']') + "}";
  const auto patched = cluster.api("PATCH", "/v1/jobs/12345", body, alice);
  EXPECT_EQ(patched.status, 400) << patched.body.dump().substr(0, 300);
  EXPECT_NE(patched.body["error"]["message"].get<std::string>().find("nested deeper than 64 levels"), std::string::npos)
      << patched.body.dump().substr(0, 300);
  const auto submitted = cluster.api("POST", "/v1/jobs", body, alice);
  EXPECT_EQ(submitted.status, 400);
  EXPECT_TRUE(cluster.daemon().running());
  EXPECT_TRUE(healthz_answers(cluster.url()));
}

// A node (here with the join token) answering its registration health check with a result nested
// a million deep: the connection is refused and the daemon lives.
TEST_F(Hostile, AnAgentMessageNestedAMillionDeepClosesTheConnectionNotTheDaemon) {
  const std::string join_token = trimmed(read_text(cluster.dir() + "/data/join.token"));
  bool answered = false;
  const ForgedAnswer deep_result = [&](const DaemonMessage& message) -> std::optional<std::string> {
    const auto* check = std::get_if<HealthCheckMsg>(&message);
    if (!check) return std::nullopt;
    answered = true;
    return "{\"type\":\"health_result\",\"task_id\":" + std::to_string(check->task_id) + ",\"error\":\"\",\"result\":{\"checks\":" +
           std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}}";
  };
  forged_agent(cluster, join_token, forged_hello("node-deep"), [](const auto&) { return false; }, 20s, deep_result);
  EXPECT_TRUE(answered) << "the daemon sent no registration check";
  EXPECT_TRUE(cluster.daemon().running());
  EXPECT_TRUE(healthz_answers(cluster.url()));
  EXPECT_NE(cluster.api("GET", "/v1/nodes/node-deep").body["state"], "HEALTHY");
  EXPECT_NE(cluster.daemon_log().find("nested deeper than 64 levels"), std::string::npos);
}

// A node is not believed about itself beyond what the daemon admits: a claim of 4096 cores, or a
// data address on another host, is refused at hello, naming the field.
TEST_F(Hostile, ANodeClaimingTooMuchOrAnotherHostsDataAddressIsRefused) {
  const std::string join_token = trimmed(read_text(cluster.dir() + "/data/join.token"));
  HelloMsg greedy = forged_hello("node-greedy");
  greedy.cores = 4096;
  HelloMsg elsewhere = forged_hello("node-elsewhere");
  elsewhere.data_addr = "10.1.2.3:22";
  for (const HelloMsg& hello : {greedy, elsewhere}) {
    const auto answers = forged_agent(cluster, join_token, hello, [](const auto& m) { return !m.empty(); }, 10s);
    ASSERT_EQ(answers.size(), 1u) << hello.name;
    const auto* refused = std::get_if<RefusedMsg>(&answers[0]);
    ASSERT_NE(refused, nullptr) << hello.name;
    EXPECT_NE(refused->reason.find(hello.name == "node-greedy" ? "--max-node-cores" : "data address"), std::string::npos)
        << refused->reason;
    EXPECT_EQ(cluster.api("GET", "/v1/nodes/" + hello.name).status, 404) << hello.name;
  }
}

}  // namespace
}  // namespace trainyard::testing
