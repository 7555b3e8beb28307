#include "tests/integration/cluster.h"

#include "agent/attempt_cgroup.h"
#include "agent/launch_paths.h"
#include "tests/integration/host_network.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <thread>

namespace trainyard::testing {
namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

Json shell_job(const std::string& name, const std::string& script, int nodes) {
  return argv_job(name, {"/bin/sh", "-c", script}, nodes);
}

Json argv_job(const std::string& name, const std::vector<std::string>& argv, int nodes) {
  return Json{{"name", name}, {"nodes", nodes}, {"command", {{"argv", argv}}}};
}

std::string job_path(std::int64_t id) { return "/v1/jobs/" + std::to_string(id); }

Json attempts_of(Cluster& cluster, std::int64_t id) {
  return cluster.api("GET", job_path(id) + "/attempts").body["attempts"];
}

int unused_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  ::close(fd);
  return ntohs(addr.sin_port);
}

Process::Process(const std::vector<std::string>& argv, const std::string& log_path, const std::string& netns_path) {
  std::vector<char*> args;
  std::vector<std::string> copy = argv;
  for (auto& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  const int log_fd = ::open(log_path.c_str(), O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
  pid_ = ::fork();
  if (pid_ == 0) {
    // Whatever happens to the test (a crash, a timeout), what it started does not outlive it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::setpgid(0, 0);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    if (!netns_path.empty()) {
      // setns rather than `ip netns exec`, which would mount a fresh /sys and hide the cgroups.
      const int netns = ::open(netns_path.c_str(), O_RDONLY);
      if (netns < 0 || ::setns(netns, CLONE_NEWNET) != 0) ::_exit(126);
      ::close(netns);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(log_fd);
}

Process::~Process() {
  if (pid_ > 0 && !status_) {
    ::killpg(pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

// Once reaped, the pid may belong to another process.
void Process::signal(int sig) const {
  if (!status_) ::kill(pid_, sig);
}

std::optional<int> Process::wait_exit(std::chrono::milliseconds timeout) {
  eventually([this] { return !running(); }, timeout);
  return status_;
}

bool Process::running() {
  if (status_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    status_ = status;
    return false;
  }
  return true;
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(5);
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(pause);  // polling interval of the condition, not a synchronisation guess
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
  return true;
}

Cluster::Cluster() : Cluster(std::string("/tmp")) {}

Cluster::Cluster(const std::string& parent_dir) {
  std::string tmpl = parent_dir + "/trainyard-it-XXXXXX";
  dir_ = ::mkdtemp(tmpl.data());
  // A root agent runs command jobs as other accounts (each job its own by default): they must reach their
  // attempt directories under agents/ (traverse, not list) and can leave files in shared/.
  const auto traversable = fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec;
  fs::permissions(dir_, traversable);
  fs::create_directory(dir_ + "/agents");
  fs::permissions(dir_ + "/agents", traversable);
  fs::create_directory(shared_dir());
  fs::permissions(shared_dir(), fs::perms::all | fs::perms::sticky_bit);
}

Cluster::Cluster(HostNetwork& network) : Cluster() {
  network_ = &network;
  network.enter("client");
}

Cluster::~Cluster() {
  agents_.clear();
  // A root agent's cgroups outlive its SIGKILL: they go, with whatever its jobs left in them.
  for (const auto& name : agent_names_) {
    agent::Cgroups::find("/sys/fs/cgroup", agent::agent_cgroup_name(name, dir_ + "/agents/" + name)).remove_all();
  }
  daemon_.reset();
  if (master_ports_lock_ >= 0) ::close(master_ports_lock_);
  std::error_code ec;
  if (!::testing::Test::HasFailure()) fs::remove_all(dir_, ec);
}

std::string Cluster::master_ports() {
  constexpr int kFirst = 20000, kWindow = 100, kWindows = 200;
  for (int window = 0; master_ports_.empty() && window < kWindows; ++window) {
    const std::string lock = "/tmp/trainyard-it-master-ports-" + std::to_string(window) + ".lock";
    const int fd = ::open(lock.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      continue;
    }
    master_ports_lock_ = fd;
    const int first = kFirst + window * kWindow;
    master_ports_ = std::to_string(first) + "-" + std::to_string(first + kWindow - 1);
  }
  EXPECT_FALSE(master_ports_.empty()) << "every window of master ports is held";
  return master_ports_;
}

std::string Cluster::daemon_log() const { return read_text(dir_ + "/daemon.log"); }

std::string Cluster::cluster_name() const {
  const std::string log = daemon_log();
  const std::string key = "event=cluster name=";
  const auto at = log.rfind(key);
  if (at == std::string::npos) {
    ADD_FAILURE() << "the daemon did not log its cluster's name";
    return "";
  }
  const std::string name = log.substr(at + key.size(), log.find_first_of(" \n", at + key.size()) - at - key.size());
  return name == "none" ? "" : name;
}

std::string Cluster::attempt_dir(const std::string& node, std::int64_t attempt) const {
  return agent::attempt_dir(dir_ + "/agents/" + node, cluster_name(), attempt).string();
}

std::string Cluster::checkpoint_dir(std::int64_t job, const std::string& root) const {
  const std::string name = cluster_name();
  const fs::path cluster_root = fs::path(root.empty() ? dir_ + "/data/checkpoints" : root) / (name.empty() ? "" : "cluster-" + name);
  return (cluster_root / ("job-" + std::to_string(job))).lexically_normal().string();
}

agent::JobAccount Cluster::job_account(std::int64_t job, std::int64_t attempt) const {
  return agent::per_job_account(agent::JobUidRange{}, cluster_name(), job, attempt, "/");
}

void Cluster::start_daemon(const std::vector<std::string>& extra_flags) {
  const std::string data = dir_ + "/data";
  fs::remove(data + "/daemon.addr");
  // A restarted daemon comes back on its old port, where its agents keep dialling.
  const std::string host = network_ ? network_->address("daemon") : "127.0.0.1";
  const std::string listen = url_.empty() ? host + ":0" : url_.substr(url_.find("://") + 3);
  std::vector<std::string> argv = {TRAINYARD_DAEMON_BIN, "--listen", listen, "--data-dir", data,
                                   "--heartbeat-interval-ms", "100", "--node-timeout-ms", "1500", "--tick-ms", "50",
                                   "--kill-grace-ms", "2000", "--retry-backoff-ms", "50",
                                   // No check of their own a minute in: tests ask for the checks they test.
                                   "--health-first-check-s", "0",
                                   // A 1.5 s node timeout leaves no room to fence within a 2 s kill grace:
                                   // tests/integration/fence_test.cpp turns fencing on with timings that do.
                                   "--fence-ms", "0", "--master-ports", master_ports()};
  // The hosts' link is a bridge in a namespace of this machine: nothing crosses a real network.
  if (network_) argv.push_back("--insecure-http");
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  daemon_ = std::make_unique<Process>(argv, dir_ + "/daemon.log", network_ ? network_->netns_path("daemon") : "");
  ++daemon_starts_;
  ASSERT_TRUE(eventually([&] { return fs::exists(data + "/daemon.addr"); }, std::chrono::seconds(20)))
      << "daemon did not start:\n" << daemon_log();
  url_ = read_text(data + "/daemon.addr");
  admin_token_ = read_text(data + "/admin.token");
  cli::ServerUrl server = cli::parse_server_url(url_);
  server.trust.ca_file = ca_file_;
  client_ = cli::make_http_client(server);
}

void Cluster::kill_daemon(int sig) {
  daemon_->signal(sig);
  daemon_->wait_exit(std::chrono::seconds(10));
  daemon_.reset();
  client_.reset();
}

void Cluster::start_agent(const std::string& name, const AgentSpec& spec) {
  std::vector<std::string> argv = {TRAINYARD_AGENT_BIN, "--server", spec.server.empty() ? url_ : spec.server, "--join-token-file",
                                   spec.join_token_file.empty() ? dir_ + "/data/join.token" : spec.join_token_file,
                                   "--name", name, "--cores", std::to_string(spec.cores), "--work-dir",
                                   dir_ + "/agents/" + name, "--collective-timeout-ms", "5000"};
  if (network_) argv.insert(argv.end(), {"--data-listen", network_->address(name) + ":0"});
  argv.insert(argv.end(), {"--job-uid-registry", spec.job_uid_registry.empty() ? dir_ + "/job-uids" : spec.job_uid_registry});
  argv.insert(argv.end(), spec.extra_flags.begin(), spec.extra_flags.end());
  agents_[name] = std::make_unique<Process>(argv, dir_ + "/agent-" + name + ".log", network_ ? network_->netns_path(name) : "");
  agent_names_.insert(name);
}

void Cluster::stop_agent(const std::string& name, int sig) {
  agents_.at(name)->signal(sig);
  agents_.at(name)->wait_exit(std::chrono::seconds(10));
  agents_.erase(name);
}

void Cluster::wait_for_nodes(int count) {
  const bool ok = eventually(
      [&] {
        const auto r = api("GET", "/v1/nodes");
        if (r.status != 200) return false;
        int ready = 0;
        for (const auto& n : r.body["nodes"]) ready += n["state"] == "HEALTHY" && n["connected"] == true;
        return ready >= count;
      },
      std::chrono::seconds(20));
  ASSERT_TRUE(ok) << "nodes did not register; daemon log:\n" << daemon_log();
}

namespace {

// With TRAINYARD_API_TRAFFIC_DIR set, every exchange of Cluster::api is appended to a file of this
// process there, one JSON line each, for deploy/openapi/validate-traffic.mjs to check against the
// served OpenAPI document with a validator of its own.
void record_exchange(const cli::HttpRequest& request, const cli::HttpResponse& response) {
  const char* dir = std::getenv("TRAINYARD_API_TRAFFIC_DIR");
  if (dir == nullptr || *dir == '\0') return;
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const Json line = {{"test", test ? std::string(test->test_suite_name()) + "." + test->name() : ""},
                     {"method", request.method},
                     {"target", request.target},
                     {"request", request.body},
                     {"status", response.status},
                     {"content_type", response.content_type},
                     {"response", response.body}};
  std::ofstream out(fs::path(dir) / ("traffic-" + std::to_string(::getpid()) + ".jsonl"), std::ios::app);
  out << line.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
}

}  // namespace

ApiResult Cluster::api(const std::string& method, const std::string& target, const std::string& body,
                       const std::string& token) {
  cli::HttpRequest req{.method = method, .target = target, .body = body};
  if (token != kNoToken) req.headers.emplace("authorization", "Bearer " + (token.empty() ? admin_token_ : token));
  if (!body.empty()) req.headers.emplace("content-type", "application/json");
  const auto result = client_->send(req);
  if (!result) {
    ADD_FAILURE() << method << " " << target << ": " << result.error().message;
    return {};
  }
  const cli::HttpResponse& resp = *result;
  record_exchange(req, resp);
  ApiResult out{resp.status, Json()};
  if (!resp.body.empty()) out.body = Json::parse(resp.body, nullptr, false);
  return out;
}

std::string Cluster::daemon_role() {
  const auto result = client_->send({.method = "GET", .target = "/healthz"});
  if (!result) return "";
  const Json body = Json::parse(result->body, nullptr, false);
  return body.is_object() ? body.value("role", "") : "";
}

std::int64_t Cluster::submit(const Json& spec, const std::string& token) {
  const auto r = api("POST", "/v1/jobs", spec.dump(), token);
  EXPECT_EQ(r.status, 201) << r.body.dump();
  return r.status == 201 ? r.body["id"].get<std::int64_t>() : -1;
}

Json Cluster::wait_job_state(std::int64_t id, const std::string& state, std::chrono::milliseconds timeout) {
  Json last;
  const bool ok = eventually(
      [&] {
        const auto r = api("GET", "/v1/jobs/" + std::to_string(id));
        last = r.body;
        return r.status == 200 && last["state"] == state;
      },
      timeout);
  if (!ok) {
    // What held it, for a failure seen once in a loaded CI run: the nodes and the daemon's last words.
    const std::string log = daemon_log();
    const std::size_t from = log.size() > 12'000 ? log.find('\n', log.size() - 12'000) + 1 : 0;
    ADD_FAILURE() << "job " << id << " did not reach " << state << "; last seen: " << last.dump(2)
                  << "\nnodes: " << api("GET", "/v1/nodes").body.dump() << "\nthe daemon's log ends:\n"
                  << log.substr(from);
  }
  return last;
}

}  // namespace trainyard::testing
