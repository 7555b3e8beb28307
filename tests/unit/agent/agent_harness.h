#pragma once
// Fakes of what the agent service acts through (agent/agent_deps.h): its link, workloads, timers and
// fence keeper, and the fixture that builds an agent on them. No sockets, no processes, no real
// time: the fake timers fire only when a test advances them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>

#include "agent/agent.h"
#include "proto/time.h"
#include "tests/support/fake_timers.h"

namespace trainyard::agent::testing {

using std::chrono::milliseconds;


// One link the agent opened; the test plays the daemon's side of it.
class FakeLink final : public net::WebSocketPeer {
 public:
  FakeLink(std::string server, std::string token, net::WebSocketClientHandlers handlers)
      : server(std::move(server)), token(std::move(token)), handlers_(std::move(handlers)) {}

  void send(std::string text) override { sent.push_back(parse_agent_message(text)); }
  void close(std::string reason) override { close_reason = std::move(reason); }
  void abort(std::string reason) override { abort_reason = std::move(reason); }

  void open() { handlers_.on_open(); }
  void deliver(const DaemonMessage& message) { handlers_.on_message(encode(message)); }
  void drop(const std::string& reason = "connection reset") { handlers_.on_closed(reason); }

  template <class T>
  std::vector<T> sent_of() const {
    std::vector<T> found;
    for (const auto& m : sent) {
      if (const T* t = std::get_if<T>(&m)) found.push_back(*t);
    }
    return found;
  }

  const std::string server;
  const std::string token;
  std::vector<AgentMessage> sent;
  std::optional<std::string> close_reason;
  std::optional<std::string> abort_reason;  // the test then plays the close with drop()

 private:
  net::WebSocketClientHandlers handlers_;
};

class FakeLinks final : public DaemonLinks {
 public:
  std::shared_ptr<net::WebSocketPeer> connect(const std::string& server, const std::string& bearer_token,
                                              net::WebSocketClientHandlers handlers) override {
    opened.push_back(std::make_shared<FakeLink>(server, bearer_token, std::move(handlers)));
    return opened.back();
  }
  FakeLink& last() { return *opened.back(); }

  std::vector<std::shared_ptr<FakeLink>> opened;
};

// What the agent did to one run; outlives the run, which the agent destroys after its exit.
struct RunRecord {
  LaunchMsg launch;
  std::vector<std::string> terminations;
  int kills = 0;
  ExitCallback exit;
  std::vector<std::string> saves;  // save_then_stop reasons
};

class FakeRun final : public AttemptRun {
 public:
  explicit FakeRun(std::shared_ptr<RunRecord> record) : record_(std::move(record)) {}
  void terminate(const std::string& reason) override { record_->terminations.push_back(reason); }
  void kill() override { ++record_->kills; }
  void save_then_stop(const std::string& reason) override { record_->saves.push_back(reason); }
  AttemptReport report() override {
    AttemptReport r;
    r.attempt_id = record_->launch.attempt_id;
    r.job_id = record_->launch.job_id;
    return r;
  }

 private:
  std::shared_ptr<RunRecord> record_;
};

class FakeWorkloads final : public Workloads {
 public:
  std::unique_ptr<AttemptRun> start_run(const LaunchMsg& launch, const std::string&, const std::string&, int,
                                        ExitCallback on_exit) override {
    auto record = std::make_shared<RunRecord>(RunRecord{launch, {}, 0, std::move(on_exit), {}});
    runs.push_back(record);
    return std::make_unique<FakeRun>(record);
  }
  std::unique_ptr<HealthTask> start_health_check(const HealthCheckMsg&, HealthTask::Done) override {
    ADD_FAILURE() << "no health checks in these tests";
    return nullptr;
  }

  std::vector<std::shared_ptr<RunRecord>> runs;
};

// What the agent last told its fence keeper: what runs, and a deadline or none.
class FakeFenceKeeper final : public FenceKeeper {
 public:
  void running(const std::vector<AttemptId>& attempts, milliseconds grace) override {
    this->attempts = attempts;
    this->grace = grace;
    ++told;
  }
  void keep_until(std::chrono::steady_clock::time_point deadline) override {
    this->deadline = deadline;
    ++told;
  }
  void clear() override {
    deadline.reset();
    ++told;
  }

  std::vector<AttemptId> attempts;
  milliseconds grace{0};
  std::optional<std::chrono::steady_clock::time_point> deadline;
  int told = 0;
};

inline LaunchMsg command_launch(AttemptId attempt) {
  LaunchMsg launch;
  launch.attempt_id = attempt;
  launch.job_id = 100 + attempt;
  launch.kind = JobKind::command;
  launch.command.argv = {"true"};
  launch.user = "alice";
  launch.data_plane_secret = std::string(64, 's');
  return launch;
}

inline AttemptExit exit_code(int code) {
  AttemptExit exit;
  exit.exit_code = code;
  exit.reason = "exited";
  return exit;
}

class AgentTest : public ::testing::Test {
 protected:
  AgentTest()
      : work_dir_(std::filesystem::temp_directory_path() /
                  ("agent-test-" + std::to_string(::getpid()) + "-" + std::to_string(next_dir_++))),
        device_(4) {
    std::filesystem::create_directories(work_dir_ / "attempts");
    use_servers({"http://daemon-a:8080"});
  }
  // A new agent dialling `servers`.
  // Without jitter unless asked, so the tests know when it dials.
  void use_servers(std::vector<std::string> servers, Jitter jitter = Jitter::none) {
    AgentConfig config;
    config.servers = std::move(servers);
    config.name = "node-a";
    config.join_token = "join-secret";
    config.work_dir = work_dir_.string();
    config.reconnect_min = milliseconds(100);
    config.reconnect_max = milliseconds(400);
    config.reconnect_jitter = jitter;
    agent_ = std::make_unique<Agent>(io_, config, device_, AgentDeps{links_, workloads_, timers_, &keeper_});
  }
  ~AgentTest() override {
    agent_.reset();
    io_.poll();
    std::filesystem::remove_all(work_dir_);
  }

  // Starts the agent and has the daemon accept it.
  FakeLink& connected() {
    agent_->start();
    welcome(links_.last());
    return links_.last();
  }
  void welcome(FakeLink& link) {
    link.open();
    link.deliver(WelcomeMsg{"test", 1000, ""});
  }
  // Runs what the agent posted (the destruction of finished runs).
  void settle() {
    io_.restart();
    io_.poll();
  }

  static inline std::atomic<int> next_dir_{0};
  std::filesystem::path work_dir_;
  boost::asio::io_context io_;
  neuron::NeuronDevice device_;
  FakeLinks links_;
  FakeWorkloads workloads_;
  ManualTimeSource clock_{from_unix_ms(1'800'000'000'000)};
  FakeTimers timers_{clock_};
  FakeFenceKeeper keeper_;
  std::unique_ptr<Agent> agent_;
};

}  // namespace trainyard::agent::testing
