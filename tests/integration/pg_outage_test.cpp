// PostgreSQL stopped (`pg_ctl stop -m immediate`) for 20 s under load, under an active and a standby
// daemon, then started again (issue 53, the PostgreSQL twin of full_disk_test.cpp). Meanwhile no
// change is answered 2xx and reads of the living daemon go on; the default 5 s lease runs out, so the
// active daemon steps down (exit 3) and the standby takes over once the server is back. Afterwards:
// nothing refused is stored, everything answered 2xx is, the running job ran once throughout, the
// cancel repeated then ends its process, and a restart of the active daemon finds the same state.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "tests/integration/cluster.h"
#include "tests/support/postgres_server.h"

// A named namespace: the test binary compiles in unity batches, where file-local names must differ.
namespace trainyard::testing::pg_outage {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kOutage = 20s;  // the outage the issue names
// The default lease: shorter than the outage, so the active daemon must step down during it.
constexpr auto kLeaseTtl = 5000ms;

bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0; }

double seconds_since(Clock::time_point from) { return std::chrono::duration<double>(Clock::now() - from).count(); }

struct Daemon {
  std::string name;  // "a" or "b", as the printed figures say
  std::string listen;
  std::string url;
  std::string data;
  std::string log;
  std::unique_ptr<Process> process;
  std::unique_ptr<cli::HttpClient> client;
};

class PgOutage : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = PostgresServer::unavailable()) GTEST_SKIP() << *why;
    // Durable, as the README asks of a real server: with synchronous_commit off an immediate stop
    // may lose commits the server had acknowledged, and the test would blame the daemon for them.
    postgres = std::make_unique<PostgresServer>(PostgresServer::Options{.durable = true});
    store = postgres->fresh_store_url();
    for (auto [daemon, name, data] : {std::tuple{&a, "a", "/data"}, std::tuple{&b, "b", "/data-b"}}) {
      daemon->name = name;
      daemon->listen = "127.0.0.1:" + std::to_string(unused_loopback_port());
      daemon->url = "http://" + daemon->listen;
      daemon->data = cluster.dir() + data;  // a's is where Cluster's agents find the join token
      daemon->log = cluster.dir() + "/daemon-" + name + ".log";
      // Short timeouts: a request left waiting on a dead store is no answer, and the test goes on.
      daemon->client = cli::make_http_client(cli::parse_server_url(daemon->url),
                                             {.connect_timeout = 2000ms, .request_timeout = 10000ms});
    }
  }

  // Starts (or restarts, at the same address and data dir) one daemon of the pair. The node timeout
  // is raised so that the agent's fence (node timeout - kill grace - a tenth: 52 s) outlasts the
  // outage plus the take-over: the running job must survive it, which is what shows it ran once.
  void start(Daemon& daemon) {
    daemon.process = std::make_unique<Process>(
        std::vector<std::string>{TRAINYARD_DAEMON_BIN, "--listen", daemon.listen, "--advertise-url", daemon.url,
                                 "--data-dir", daemon.data, "--store", store, "--lease-ttl-ms",
                                 std::to_string(kLeaseTtl.count()), "--node-timeout-ms", "60000", "--kill-grace-ms",
                                 "2000", "--heartbeat-interval-ms", "100", "--tick-ms", "50"},
        daemon.log);
  }

  // What the daemon's /healthz says it is: "active", "standby", or "" when it does not answer 200.
  static std::string role(Daemon& daemon) {
    const auto result = daemon.client->send({.method = "GET", .target = "/healthz"});
    if (!result || result->status != 200) return "";
    const Json body = Json::parse(result->body, nullptr, false);
    return body.is_object() ? body.value("role", "") : "";
  }

  // The daemon that says it is active, or null.
  Daemon* active_daemon() {
    for (Daemon* daemon : {&a, &b}) {
      if (daemon->process && daemon->process->running() && role(*daemon) == "active") return daemon;
    }
    return nullptr;
  }

  // One exchange with the first daemon's admin token (the store holds only its hash, so both take it);
  // status 0 when nothing was answered (refused connection, reset, timeout).
  ApiResult api(Daemon& daemon, const std::string& method, const std::string& target, const std::string& body = "") {
    cli::HttpRequest request{.method = method, .target = target, .body = body};
    request.headers = {{"authorization", "Bearer " + admin_token}};
    if (!body.empty()) request.headers.emplace("content-type", "application/json");
    const auto result = daemon.client->send(request);
    if (!result) return {};
    return {result->status, Json::parse(result->body, nullptr, false)};
  }

  bool node_connected_to(Daemon& daemon, const std::string& node) {
    const Json body = api(daemon, "GET", "/v1/nodes/" + node).body;
    return body.is_object() && body.value("connected", false) && body.value("state", "") == "HEALTHY";
  }

  // What a restart must find again: each job's state, cancel, hold, spec and attempts, the node's state.
  Json remembered_state(Daemon& daemon, const std::vector<std::int64_t>& jobs, const std::string& node) {
    Json state;
    for (const std::int64_t id : jobs) {
      const Json job = api(daemon, "GET", job_path(id)).body;
      state["jobs"][std::to_string(id)] = {{"state", job["state"]},
                                           {"held_by", job.value("held_by", "")},
                                           {"spec", job["spec"]},
                                           {"attempts", job["attempts"]}};
    }
    const ApiResult nodes = api(daemon, "GET", "/v1/nodes/" + node);
    state["nodes"][node] = nodes.status == 200 ? nodes.body["state"] : Json(nodes.status);
    return state;
  }

  std::string logs() const { return "--- daemon a:\n" + read_text(a.log) + "--- daemon b:\n" + read_text(b.log); }

  // Declared first, so stopped last: after the daemons and agents, also when the test fails.
  std::unique_ptr<PostgresServer> postgres;
  std::string store;
  Cluster cluster;
  Daemon a;
  Daemon b;
  std::string admin_token;
};

// Submits while the server stops and stays down ("under load"), each a job that stays pending (two
// nodes of one), with a name of its own: the store is later searched for the refused ones by name.
class SubmitLoad {
 public:
  explicit SubmitLoad(const std::string& url, const std::string& token)
      : client_(cli::make_http_client(cli::parse_server_url(url), {.connect_timeout = 2000ms, .request_timeout = 10000ms})),
        token_(token),
        thread_([this] { run(); }) {}
  ~SubmitLoad() { stop(); }

  void stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // Name -> HTTP status (0: no answer) and, when accepted, the id.
  std::map<std::string, std::pair<int, std::int64_t>> answers() {
    std::lock_guard lock(mutex_);
    return answers_;
  }

 private:
  void run() {
    for (int i = 0; !stopping_; ++i) {
      const std::string name = "load-" + std::to_string(i);
      const Json spec = {{"name", name}, {"nodes", 2}, {"wait_for_capacity", true}, {"command", {{"argv", {"/bin/true"}}}}};
      cli::HttpRequest request{.method = "POST", .target = "/v1/jobs", .body = spec.dump()};
      request.headers = {{"authorization", "Bearer " + token_}, {"content-type", "application/json"}};
      const auto result = client_->send(request);
      std::pair<int, std::int64_t> answer{0, 0};
      if (result) {
        answer.first = result->status;
        const Json body = Json::parse(result->body, nullptr, false);
        if (result->status == 201 && body.is_object()) answer.second = body.value("id", std::int64_t{0});
      }
      {
        std::lock_guard lock(mutex_);
        answers_[name] = answer;
      }
      std::this_thread::sleep_for(20ms);  // the load's pace (about 50 submissions/s), not a wait for an event
    }
  }

  std::unique_ptr<cli::HttpClient> client_;
  std::string token_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::map<std::string, std::pair<int, std::int64_t>> answers_;
  std::thread thread_;  // last: started once the rest is built
};

TEST_F(PgOutage, NothingIsAnswered2xxUnlessStoredAndTheStandbyCarriesOnOnceTheServerReturns) {
  start(a);
  ASSERT_TRUE(eventually([&] { return role(a) == "active"; }, 20s)) << logs();
  admin_token = trimmed(read_text(a.data + "/admin.token"));
  fs::create_directories(b.data);
  fs::permissions(b.data, fs::perms::owner_all);
  for (const char* file : {"admin.token", "join.token"}) fs::copy_file(a.data + "/" + file, b.data + "/" + file);
  start(b);
  ASSERT_TRUE(eventually([&] { return role(b) == "standby"; }, 20s)) << logs();

  const std::string node = "pg-1";
  cluster.start_agent(node, {.server = a.url + "," + b.url});
  ASSERT_TRUE(eventually([&] { return node_connected_to(a, node); }, 20s)) << logs();

  // The running job notes each start of it and its process id.
  const std::string starts = cluster.shared_dir() + "/starts";
  const std::string pid_file = cluster.shared_dir() + "/running.pid";
  const ApiResult submitted = api(
      a, "POST", "/v1/jobs",
      Json{{"name", "running"},
           {"cores_per_node", 1},
           {"command",
            {{"argv", {"/bin/sh", "-c", "echo $TRAINYARD_ATTEMPT_ID >> " + starts + "; echo $$ > " + pid_file + "; exec sleep 600"}}}}}
          .dump());
  ASSERT_EQ(submitted.status, 201) << submitted.body.dump();
  const std::int64_t running = submitted.body["id"];
  // Two nodes wanted of one: held and pending stay so whatever the outage does.
  Json waiting = {{"name", "held"}, {"nodes", 2}, {"wait_for_capacity", true}, {"hold", true}, {"command", {{"argv", {"/bin/true"}}}}};
  const ApiResult held_answer = api(a, "POST", "/v1/jobs", waiting.dump());
  ASSERT_EQ(held_answer.status, 201) << held_answer.body.dump();
  const std::int64_t held = held_answer.body["id"];
  waiting["name"] = "pending";
  waiting.erase("hold");
  const ApiResult pending_answer = api(a, "POST", "/v1/jobs", waiting.dump());
  ASSERT_EQ(pending_answer.status, 201) << pending_answer.body.dump();
  const std::int64_t pending = pending_answer.body["id"];
  ASSERT_TRUE(eventually([&] { return api(a, "GET", job_path(running)).body["state"] == "RUNNING"; }, 20s)) << logs();
  ASSERT_TRUE(eventually([&] { return fs::exists(pid_file) && !trimmed(read_text(pid_file)).empty(); }, 10s));
  const pid_t running_pid = std::stoi(trimmed(read_text(pid_file)));
  const Json pending_spec = api(a, "GET", job_path(pending)).body["spec"];
  // A job that ended before the outage: what a user reads first after its end.
  const ApiResult ended_answer =
      api(a, "POST", "/v1/jobs", Json{{"name", "ended"}, {"cores_per_node", 1}, {"command", {{"argv", {"/bin/true"}}}}}.dump());
  ASSERT_EQ(ended_answer.status, 201) << ended_answer.body.dump();
  const std::int64_t ended = ended_answer.body["id"];
  ASSERT_TRUE(eventually([&] { return api(a, "GET", job_path(ended)).body["state"] == "SUCCEEDED"; }, 20s)) << logs();
  ASSERT_EQ(api(a, "GET", job_path(held)).body["held_by"], "owner");

  SubmitLoad load(a.url, admin_token);
  ASSERT_TRUE(eventually([&] { return load.answers().size() >= 5; }, 20s)) << "the load is running before the stop";
  postgres->stop_immediately();
  const auto stopped_at = Clock::now();

  // Every change sent to both daemons, round after round, until the outage ends: never 2xx.
  struct Change {
    std::string method, target, body;
  };
  const std::vector<Change> changes = {{"POST", job_path(running) + "/cancel", ""},
                                       {"POST", job_path(held) + "/release", ""},
                                       {"PATCH", job_path(pending), R"({"priority": 7})"},
                                       {"POST", "/v1/nodes/" + node + "/drain", R"({"reason":"pg-outage test"})"}};
  // Non-2xx answers: by the active daemon (503, or nothing once it is gone), by the standby (307/503).
  int refused = 0, refused_503 = 0, unanswered_changes = 0, refused_by_standby = 0, answered = 0;
  std::string degraded_said;  // a's /healthz once it said degraded
  std::string unreadable_said;  // a live job's read that said what the store could not give
  std::string list_unreadable_said;  // the same of the job list
  std::string ended_unreadable_said;  // the same of a job that had ended
  while (Clock::now() - stopped_at < kOutage) {
    for (const Change& change : changes) {
      for (Daemon* daemon : {&a, &b}) {
        const ApiResult r = api(*daemon, change.method, change.target, change.body);
        EXPECT_FALSE(r.status >= 200 && r.status < 300)
            << change.method << " " << change.target << " answered " << r.status << " by daemon " << daemon->name
            << " with PostgreSQL down: " << r.body.dump();
        ++refused;
        if (daemon == &b) {
          ++refused_by_standby;
        } else {
          refused_503 += r.status == 503;
          unanswered_changes += r.status == 0;
        }
        if (daemon == &a && r.status != 0 && r.status != 503) {
          ADD_FAILURE() << change.method << " " << change.target << " by the active daemon: " << r.status << " "
                        << r.body.dump() << " (503 expected)";
        }
      }
    }
    // Reads of the active daemon while it lives: the old state, served from memory.
    if (a.process->running()) {
      const auto health = a.client->send({.method = "GET", .target = "/healthz"});
      if (health && health->status == 503 && health->body.find("\"degraded\"") != std::string::npos) {
        degraded_said = health->body;
      }
      const std::vector<std::pair<std::string, std::function<void(const Json&)>>> reads = {
          {job_path(running),
           [&](const Json& job) {
             EXPECT_EQ(job["state"], "RUNNING") << job.dump();
             EXPECT_NE(job.value("cancel_requested", false), true) << job.dump();
           }},
          {job_path(held), [&](const Json& job) { EXPECT_EQ(job["held_by"], "owner") << job.dump(); }},
          {job_path(ended), [&](const Json& job) { EXPECT_EQ(job["state"], "SUCCEEDED") << job.dump(); }},
          {job_path(pending), [&](const Json& job) { EXPECT_EQ(job["spec"], pending_spec) << job.dump(); }},
          {"/v1/nodes/" + node, [&](const Json& n) { EXPECT_EQ(n["state"], "HEALTHY") << n.dump(); }},
          {"/v1/jobs",
           [&](const Json& list) {
             bool listed = false;
             for (const Json& job : list["jobs"]) listed = listed || job["id"] == running;
             EXPECT_TRUE(listed) << "the running job is missing from the list: " << list.dump();
           }},
      };
      for (const auto& [target, check] : reads) {
        const ApiResult r = api(a, "GET", target);
        if (r.status == 200) {
          ++answered;
          check(r.body);
          if (r.body.contains("store_unreadable")) {
            (target == "/v1/jobs" ? list_unreadable_said : target == job_path(ended) ? ended_unreadable_said : unreadable_said) =
                r.body["store_unreadable"];
          }
        } else {
          // Only a daemon on its way out may leave a read unanswered.
          EXPECT_TRUE(r.status == 0 && a.process->wait_exit(3s))
              << "GET " << target << " answered " << r.status << " while the daemon lives: " << r.body.dump();
        }
      }
    }
    std::this_thread::sleep_for(200ms);  // the pace of the outage's rounds of requests, not a wait for an event
  }
  load.stop();

  // The lease (5 s) ran out during the 20 s: the active daemon stepped down saying so, and had said
  // degraded before. Nobody could take over: the standby cannot reach the store either.
  const std::optional<int> a_status = a.process->wait_exit(1s);
  ASSERT_TRUE(a_status) << "the active daemon kept running through a 20 s outage with a 5 s lease\n" << logs();
  EXPECT_TRUE(WIFEXITED(*a_status) && WEXITSTATUS(*a_status) == 3) << *a_status;
  EXPECT_NE(read_text(a.log).find("event=lease_lost"), std::string::npos) << logs();
  EXPECT_NE(degraded_said.find("the store confirmed no lease renewal for"), std::string::npos)
      << "/healthz never said degraded: " << degraded_said;
  // A live job read while the server was down came from memory and said what it left out.
  EXPECT_NE(unreadable_said.find("goodput and earlier attempts not shown"), std::string::npos) << unreadable_said;
  EXPECT_NE(list_unreadable_said.find("only live jobs are listed"), std::string::npos) << list_unreadable_said;
  EXPECT_NE(ended_unreadable_said.find("goodput and earlier attempts not shown"), std::string::npos)
      << "a job that had ended was not read from memory: " << ended_unreadable_said;
  EXPECT_EQ(role(b), "standby") << logs();

  postgres->start_again();
  const auto returned_at = Clock::now();
  // The standby takes the lease (a stored change: the epoch moves on), rebuilds and listens again.
  ASSERT_TRUE(eventually([&] { return role(b) == "active"; }, 20s)) << logs();
  const double active_after = seconds_since(returned_at);
  // The supervisor's part: the daemon that stepped down comes back, as a standby.
  start(a);
  ASSERT_TRUE(eventually([&] { return role(a) == "standby"; }, 20s)) << logs();
  ASSERT_TRUE(eventually([&] { return node_connected_to(b, node); }, 20s)) << logs();

  // Nothing refused was stored.
  const Json running_now = api(b, "GET", job_path(running)).body;
  EXPECT_EQ(running_now["state"], "RUNNING") << running_now.dump();
  EXPECT_NE(running_now.value("cancel_requested", false), true) << running_now.dump();
  EXPECT_EQ(api(b, "GET", job_path(held)).body["held_by"], "owner");
  EXPECT_EQ(api(b, "GET", job_path(pending)).body["spec"], pending_spec);
  EXPECT_EQ(api(b, "GET", "/v1/nodes/" + node).body["state"], "HEALTHY");
  // The running job ran once throughout: one attempt, one start, its first process still there.
  EXPECT_EQ(running_now["attempts"], 1) << running_now.dump();
  EXPECT_EQ(trimmed(read_text(starts)).find('\n'), std::string::npos) << "started more than once:\n" << read_text(starts);
  EXPECT_TRUE(process_exists(running_pid)) << "the running job's process did not live through the outage";

  // Every submit of the load answered 201 is stored; none refused is.
  std::set<std::string> stored_names;
  const ApiResult listed = api(b, "GET", "/v1/jobs?limit=1000");
  ASSERT_EQ(listed.status, 200) << listed.body.dump() << logs();
  for (const Json& job : listed.body["jobs"]) stored_names.insert(job["name"].get<std::string>());
  int load_accepted = 0, load_refused = 0;
  std::vector<std::int64_t> jobs = {running, held, pending};
  for (const auto& [name, answer] : load.answers()) {
    const auto& [status, id] = answer;
    if (status == 201) {
      ++load_accepted;
      jobs.push_back(id);
      EXPECT_TRUE(stored_names.count(name)) << name << " was answered 201 (job " << id << ") but is not stored";
    } else {
      ++load_refused;
      // Unanswered (0: a commit whose answer the server's stop lost is held until the store says,
      // and the daemon may end first) claims nothing; a refusal must be true.
      if (status != 0) {
        EXPECT_FALSE(stored_names.count(name)) << name << " was answered " << status << " but is stored";
      }
    }
  }

  // The cancel repeated now takes, and ends the process; so do the other changes.
  const ApiResult cancel = api(b, "POST", job_path(running) + "/cancel");
  EXPECT_EQ(cancel.status, 200) << cancel.body.dump();
  const double first_stored_after = seconds_since(returned_at);
  EXPECT_TRUE(eventually([&] { return api(b, "GET", job_path(running)).body["state"] == "CANCELLED"; }, 20s))
      << api(b, "GET", job_path(running)).body.dump() << logs();
  EXPECT_TRUE(eventually([&] { return !process_exists(running_pid); }, 10s)) << "the cancelled job's process lives on";
  EXPECT_EQ(api(b, "POST", job_path(held) + "/release").status, 200);
  EXPECT_EQ(api(b, "GET", job_path(held)).body.value("held_by", ""), "");
  EXPECT_EQ(api(b, "PATCH", job_path(pending), R"({"priority": 7})").status, 200);
  EXPECT_EQ(api(b, "GET", job_path(pending)).body["spec"]["priority"], 7);
  EXPECT_EQ(api(b, "POST", "/v1/nodes/" + node + "/drain", R"({"reason":"pg-outage test"})").status, 200);
  EXPECT_TRUE(eventually([&] { return api(b, "GET", "/v1/nodes/" + node).body["state"] == "DRAINED"; }, 10s));

  // A kill -9 and restart of the active daemon: whichever daemon is active next shows the same.
  const Json before_restart = remembered_state(b, jobs, node);
  b.process->signal(SIGKILL);
  b.process->wait_exit(10s);
  start(b);
  Daemon* next = nullptr;
  ASSERT_TRUE(eventually([&] { return (next = active_daemon()) != nullptr; }, 30s)) << logs();
  EXPECT_EQ(remembered_state(*next, jobs, node), before_restart);
  EXPECT_EQ(before_restart.value(Json::json_pointer("/nodes/" + node), Json()), "DRAINED") << before_restart.dump();

  std::cout << std::fixed << std::setprecision(1) << "pg-outage: refused " << refused << " requests (active daemon: "
            << refused_503 << " 503, " << unanswered_changes << " no answer once gone; standby: " << refused_by_standby
            << " redirected or 503), answered " << answered
            << " reads, load submits accepted " << load_accepted << " refused " << load_refused
            << ", first stored change " << active_after << " s after the server returned (the take-over; the cancel "
            << first_stored_after << " s), active daemon: the standby (b), then " << next->name
            << " after a kill -9 of b\n";
}

}  // namespace
}  // namespace trainyard::testing::pg_outage
