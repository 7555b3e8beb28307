#pragma once
// Socket-free, clock-free doubles for the daemon's unit tests.
//
// `IoQueue` stands in for the I/O thread: the store and file workers post completions into it from
// their own threads, and the test runs them on the test thread. `settle()` reaches quiescence
// without sleeping: it queues a barrier behind everything queued on each worker (each runs tasks in
// order and posts a write's completion before a later read's), runs completions until both
// barriers' arrive, fires due timers, and repeats until a round did nothing but the barriers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "daemon/base/store_worker.h"
#include "daemon/job_manager.h"
#include "proto/messages.h"
#include "proto/time.h"
#include "scheduler/scheduler.h"
#include "tests/support/fake_timers.h"
#include "tests/support/failing_store.h"
#include "tests/support/in_memory_store.h"
#include "tests/support/io_queue.h"

namespace trainyard::daemon::testing {

inline constexpr std::chrono::seconds kWaitLimit{10};

// The shared IoQueue, waiting as long as the tests wait for anything.
class IoQueue : public trainyard::IoQueue {
 public:
  // Runs completions until `done()` holds; fails the test if that takes longer than kWaitLimit.
  // Returns how many ran.
  int run_until(const std::function<bool()>& done) {
    int ran = 0;
    const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
    while (!done()) {
      if (!wait_until(deadline)) {
        ADD_FAILURE() << "no completion arrived within " << kWaitLimit.count() << " s";
        return ran;
      }
      ran += run_ready();
    }
    return ran;
  }
};

// An agent connection that records what the daemon sent it.
class FakeAgent final : public AgentChannel {
 public:
  void send(const DaemonMessage& message) override { sent.push_back(message); }
  void disconnect(const std::string& reason) override {
    disconnected = true;
    disconnect_reason = reason;
  }

  template <typename T>
  std::vector<T> all() const {
    std::vector<T> out;
    for (const auto& m : sent) {
      if (const auto* t = std::get_if<T>(&m)) out.push_back(*t);
    }
    return out;
  }
  std::vector<LaunchMsg> launches() const { return all<LaunchMsg>(); }
  std::vector<KillMsg> kills() const { return all<KillMsg>(); }

  std::vector<DaemonMessage> sent;
  bool disconnected = false;
  std::string disconnect_reason;
};

inline TimePoint test_epoch() { return from_unix_ms(1'800'000'000'000); }

inline JobManagerConfig test_config() {
  JobManagerConfig c;
  c.daemon_version = "test";
  c.heartbeat_interval = Millis(1000);
  c.node_timeout = Millis(5000);
  c.kill_grace_ms = 3000;
  // Attempts claim their job's checkpoint directory before launch: a real, private directory.
  c.checkpoint_root = (std::filesystem::temp_directory_path() / ("trainyard-daemon-test-" + std::to_string(::getpid()))).string();
  c.max_infra_retries = 2;
  c.retry_backoff_base = Millis(2000);
  c.log_fetch_timeout = Millis(1000);
  // Health checks have their own tests (health_test.cpp); elsewhere nodes take work at once.
  c.registration_checks = false;
  c.preflight_checks = false;
  c.health.task_timeout = Millis(10000);
  return c;
}

inline JobSpec command_spec(int nodes, int attempts = 1) {
  JobSpec spec;
  spec.name = "train";
  spec.nodes = nodes;
  spec.command.argv = {"/bin/true"};
  spec.retry.attempts = attempts;
  return spec;
}

// A daemon without sockets: job manager over an in-memory store, with fake agents and time.
struct Cluster {
  explicit Cluster(JobManagerConfig config = test_config())
      : worker(store, io.poster()), files(io.poster()), jobs(worker, files, clock, timers, std::move(config), scheduler) {}

  // Runs completions and due timers until nothing more happens.
  void settle() {
    for (;;) {
      int barriers = 0;
      worker.read([&barriers](store::Store&) { return StoreWorker::Continuation([&barriers] { ++barriers; }); },
                  [](const Error& error) { ADD_FAILURE() << "barrier read failed: " << error.message; });
      files.run([&barriers] { return FileWorker::Continuation([&barriers] { ++barriers; }); },
                [](const Error& error) { ADD_FAILURE() << "barrier file task failed: " << error.message; });
      const int ran = io.run_until([&barriers] { return barriers == 2; }) - 2;
      const int fired = timers.fire_due();
      if (ran == 0 && fired == 0) return;
    }
  }
  void advance(Millis by) {
    clock.advance(by);
    settle();
  }
  // Ticks until the daemon's own changes that wait for the store are stored; the deadline is the
  // retries' backoff cap (pending_writes.h), a few times over.
  void tick_until_stored() {
    for (int i = 0; i < 20 && jobs.changes_wait_for_store(); ++i) {
      advance(Millis(500));
      jobs.tick();
      settle();
    }
    ASSERT_FALSE(jobs.changes_wait_for_store()) << "the waiting changes were never stored";
  }

  std::shared_ptr<FakeAgent> connect(const std::string& name, int cores = 8, std::vector<AttemptReport> running = {}) {
    HelloMsg hello;
    hello.agent_version = "test-agent";
    hello.name = name;
    hello.cores = cores;
    hello.memory_mb = 1024;
    hello.data_addr = "10.0.0." + std::to_string(agents.size() + 1) + ":7000";
    hello.attempts = std::move(running);
    auto agent = std::make_shared<FakeAgent>();
    EXPECT_TRUE(jobs.agent_hello(hello, agent).ok()) << "hello of " << name << " refused";
    agents[name] = agent;
    data_addr[name] = hello.data_addr;
    settle();
    return agent;
  }

  void send(const std::string& node, const AgentMessage& message) {
    jobs.agent_message(node, agents.at(node).get(), message);
    settle();
  }
  void started(const std::string& node, AttemptId id) { send(node, AttemptStartedMsg{id}); }
  void exited(const std::string& node, AttemptId id, std::optional<int> code, std::optional<int> signal = std::nullopt,
              std::string reason = "") {
    AttemptExitedMsg msg;
    msg.attempt_id = id;
    msg.exit_code = code;
    msg.signal = signal;
    msg.reason = std::move(reason);
    send(node, msg);
  }
  void heartbeat(const std::string& node, std::vector<AttemptReport> running = {}) {
    send(node, HeartbeatMsg{0, std::move(running), {}});
  }
  std::vector<store::Event> events_of_kind(const std::string& kind) {
    std::vector<store::Event> out;
    for (const auto& e : memory.events_after(0, 10'000)) {
      if (e.kind == kind) out.push_back(e);
    }
    return out;
  }

  Job submit(JobSpec spec, const std::string& user = "alice") {
    std::optional<Job> accepted;
    jobs.submit(std::move(spec), user, [&accepted](Result<JobManager::Submitted> submitted) {
      ASSERT_TRUE(submitted) << submitted.error().message;
      EXPECT_EQ(submitted->record, store::job_record(submitted->job))
          << "the answer must carry the accepted job's stored record";
      accepted = submitted->job;
    });
    settle();
    EXPECT_TRUE(accepted);
    return accepted.value_or(Job{});
  }

  // The stored record, read through the worker as the daemon would.
  std::optional<Job> stored_job(JobId id) {
    std::optional<Job> out;
    bool done = false;
    worker.read(
        [&, id](store::Store& s) {
          return StoreWorker::Continuation([&, job = s.job(id)] {
            out = job;
            done = true;
          });
        },
        [](const Error& error) { ADD_FAILURE() << error.message; });
    io.run_until([&done] { return done; });
    return out;
  }
  std::vector<Attempt> stored_attempts(JobId id) {
    std::vector<Attempt> out;
    bool done = false;
    worker.read(
        [&, id](store::Store& s) {
          return StoreWorker::Continuation([&, list = s.attempts_of(id)] {
            out = list;
            done = true;
          });
        },
        [](const Error& error) { ADD_FAILURE() << error.message; });
    io.run_until([&done] { return done; });
    return out;
  }

  // Every launch sent so far, by node.
  std::map<std::string, std::vector<LaunchMsg>> launches() const {
    std::map<std::string, std::vector<LaunchMsg>> out;
    for (const auto& [name, agent] : agents) {
      auto l = agent->launches();
      if (!l.empty()) out[name] = l;
    }
    return out;
  }
  // The nodes of the latest launch of `attempt`, by rank.
  std::vector<std::string> nodes_of(AttemptId attempt) const {
    std::map<int, std::string> by_rank;
    for (const auto& [name, list] : launches()) {
      for (const auto& l : list) {
        if (l.attempt_id == attempt) by_rank[l.rank] = name;
      }
    }
    std::vector<std::string> out;
    for (const auto& [rank, name] : by_rank) out.push_back(name);
    return out;
  }

  // Declared first, so it goes last, after the store worker that writes there has stopped. Job ids
  // restart at 1 in every test: no test may resume from the checkpoints of the one before.
  struct RemovedAtTheEnd {
    std::string path;
    ~RemovedAtTheEnd() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } checkpoint_root{test_config().checkpoint_root};
  ManualTimeSource clock{test_epoch()};
  InMemoryStore memory;
  FailingStore store{memory};
  IoQueue io;
  FakeTimers timers{clock};
  scheduler::Scheduler scheduler{scheduler::Config{}};
  StoreWorker worker;
  FileWorker files;
  JobManager jobs;
  std::map<std::string, std::shared_ptr<FakeAgent>> agents;
  std::map<std::string, std::string> data_addr;
};

inline NodeState state_of(Cluster& c, const std::string& node) { return c.jobs.node(node)->node.state; }

}  // namespace trainyard::daemon::testing
