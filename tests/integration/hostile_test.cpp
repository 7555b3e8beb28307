// Hostile jobs and clients (issue #12): what one user's job or a forged client does must not take
// an agent or the daemon down, nor reach another user's work.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <sstream>
#include <thread>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

Json command_job(const std::string& name, const std::string& script) {
  return Json{{"name", name}, {"nodes", 1}, {"command", {{"argv", {"/bin/sh", "-c", script}}}}};
}

bool process_alive(pid_t pid) { return ::kill(pid, 0) == 0; }

pid_t read_pid(const std::string& path) {
  const std::string text = read_text(path);
  return text.empty() ? 0 : static_cast<pid_t>(std::stol(text));
}

// A raw client connection to the daemon, closed when it goes.
class RawConnection {
 public:
  explicit RawConnection(const std::string& url) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(std::stoi(url.substr(url.rfind(':') + 1))));
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    connected_ = ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  // Sends GET /healthz and reads until the status line is in, the server closes, or `timeout`.
  std::string get_healthz(std::chrono::milliseconds timeout) {
    const std::string request = "GET /healthz HTTP/1.1\r\nHost: daemon\r\n\r\n";
    if (::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) return "";
    std::string in;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (in.find("\r\n") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[512];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      in.append(buf, static_cast<std::size_t>(n));
    }
    return in;
  }
  // Whether the server closed (or reset) the connection within `timeout` without sending anything.
  bool closed_by_server(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
    char c = 0;
    return ::recv(fd_, &c, 1, 0) <= 0;
  }

 private:
  int fd_;
  bool connected_ = false;
};

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

std::size_t open_descriptors(pid_t pid) {
  const auto dir = fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd");
  return static_cast<std::size_t>(std::distance(fs::begin(dir), fs::end(dir)));
}

bool healthz_answers(const std::string& url) {
  cli::HttpClientOptions options;
  options.connect_timeout = 1s;
  options.request_timeout = 1s;
  const auto result = cli::make_http_client(cli::parse_server_url(url), options)->send({"GET", "/healthz", {}, ""});
  const auto* response = std::get_if<cli::HttpResponse>(&result);
  return response && response->status == 200;
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
  const auto id = cluster.submit(command_job(
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
  const auto next = cluster.submit(command_job("after", "echo fine"));
  cluster.wait_job_state(next, "SUCCEEDED", 30s);
}

TEST_F(Hostile, AJobSeesNoneOfTheAgentsEnvironmentAndTheDaemonsFilesArePrivate) {
  const auto id = cluster.submit(command_job("env", "env"));
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
  EXPECT_EQ(mode(cluster.dir() + "/data"), 0700u);
  EXPECT_EQ(mode(cluster.dir() + "/data/trainyard.db"), 0600u);
  EXPECT_EQ(mode(cluster.dir() + "/data/admin.token"), 0600u);
  EXPECT_EQ(mode(cluster.dir() + "/agents/node-a/attempts/1"), 0700u);
}

TEST_F(Hostile, AJobsProcessesDoNotOutliveAKilledAgent) {
  // The job's leader and a child it leaves in its process group record their pids, then wait.
  const std::string leader_file = cluster.dir() + "/leader.pid", child_file = cluster.dir() + "/child.pid";
  const auto id = cluster.submit(command_job("orphan", "sleep 600 & echo $! > " + child_file + "; echo $$ > " +
                                                           leader_file + "; wait"));
  cluster.wait_job_state(id, "RUNNING", 30s);
  ASSERT_TRUE(eventually([&] { return read_pid(leader_file) > 0 && read_pid(child_file) > 0; }, 30s));
  const pid_t leader = read_pid(leader_file), child = read_pid(child_file);

  cluster.stop_agent("node-a", SIGKILL);
  EXPECT_TRUE(eventually([&] { return !process_alive(leader); }, 20s)) << "the leader outlived its agent";

  // What the leader left in its group is killed by the agent's next life, before it takes work.
  cluster.start_agent("node-a");
  EXPECT_TRUE(eventually([&] { return !process_alive(child); }, 20s)) << "the child outlived the restart";
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

TEST(HostileClients, OneAddressCannotHoldMoreConnectionsThanItsCap) {
  Cluster cluster;
  cluster.start_daemon({"--max-connections-per-ip", "3"});
  std::vector<std::unique_ptr<RawConnection>> admitted;
  for (int i = 0; i < 3; ++i) {
    admitted.push_back(std::make_unique<RawConnection>(cluster.url()));
    EXPECT_NE(admitted.back()->get_healthz(10s).find("200 OK"), std::string::npos) << "connection " << i;
  }
  RawConnection over(cluster.url());
  ASSERT_TRUE(over.connected());
  EXPECT_TRUE(over.closed_by_server(10s)) << "the fourth connection from one address was served";
  EXPECT_TRUE(eventually(
      [&] { return cluster.daemon_log().find("event=connection_refused remote=127.0.0.1 why=over_per_ip_cap") != std::string::npos; },
      10s))
      << cluster.daemon_log();
  // The kept connections still work, and a closed one makes room for another.
  EXPECT_NE(admitted[0]->get_healthz(10s).find("200 OK"), std::string::npos);
  admitted.pop_back();
  EXPECT_TRUE(eventually([&] { return healthz_answers(cluster.url()); }, 10s));
}

}  // namespace
}  // namespace trainyard::testing
