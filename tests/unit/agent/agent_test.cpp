// The agent service against fakes of its link, workloads and timers (agent/agent_deps.h): the
// reconnect policy, exit resend, what it refuses or ignores from the daemon, and kill grace. No
// sockets, no processes, no real time: the fake timers fire only when a test advances them.
#include "agent/agent.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/command_run.h"
#include "proto/time.h"

namespace trainyard::agent {
namespace {

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

// Timers on the monotonic side of a manual clock, which moves only in `advance`; a test may step its
// system side (`clock.step_system_clock`) as NTP would.
class FakeTimers final : public Timers {
 public:
  struct Pending {
    MonoTime due{};
    std::function<void()> fire;  // empty: cancelled or fired
  };

  class FakeTimer final : public Timer {
   public:
    explicit FakeTimer(FakeTimers& timers) : timers_(timers) {}
    ~FakeTimer() override { cancel(); }
    void start(milliseconds after, std::function<void()> fire) override {
      cancel();
      pending_ = std::make_shared<Pending>(Pending{timers_.clock.monotonic_now() + after, std::move(fire)});
      timers_.pending_.push_back(pending_);
    }
    void cancel() override {
      if (pending_) pending_->fire = nullptr;
    }

   private:
    FakeTimers& timers_;
    std::shared_ptr<Pending> pending_;
  };

  ~FakeTimers() override {
    // A fired-never callback may hold its own timer: break that cycle. Swapped out first, because
    // destroying the callback destroys that timer, whose cancel() empties the same slot.
    for (auto& p : pending_) {
      std::function<void()> fire;
      fire.swap(p->fire);
    }
  }

  std::unique_ptr<Timer> make() override { return std::make_unique<FakeTimer>(*this); }

  // Moves the clock forward by `by`, firing what falls due on the way, earliest first.
  void advance(milliseconds by) {
    const MonoTime until = clock.monotonic_now() + by;
    for (;;) {
      std::erase_if(pending_, [](const auto& p) { return !p->fire; });
      auto next = std::min_element(pending_.begin(), pending_.end(),
                                   [](const auto& a, const auto& b) { return a->due < b->due; });
      if (next == pending_.end() || (*next)->due > until) break;
      clock.advance((*next)->due - clock.monotonic_now());
      auto fire = std::move((*next)->fire);
      (*next)->fire = nullptr;
      fire();
    }
    clock.advance(until - clock.monotonic_now());
  }

  ManualTimeSource clock{from_unix_ms(1'800'000'000'000)};

 private:
  std::vector<std::shared_ptr<Pending>> pending_;
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
  std::unique_ptr<AttemptRun> start_run(const LaunchMsg& launch, const std::string&, int,
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

LaunchMsg command_launch(AttemptId attempt) {
  LaunchMsg launch;
  launch.attempt_id = attempt;
  launch.job_id = 100 + attempt;
  launch.kind = JobKind::command;
  launch.command.argv = {"true"};
  launch.user = "alice";
  launch.data_plane_secret = std::string(64, 's');
  return launch;
}

AttemptExit exit_code(int code) {
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
  void use_servers(std::vector<std::string> servers) {
    AgentConfig config;
    config.servers = std::move(servers);
    config.name = "node-a";
    config.join_token = "join-secret";
    config.work_dir = work_dir_.string();
    config.reconnect_min = milliseconds(100);
    config.reconnect_max = milliseconds(400);
    agent_ = std::make_unique<Agent>(io_, config, device_, AgentDeps{links_, workloads_, timers_});
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
  FakeTimers timers_;
  std::unique_ptr<Agent> agent_;
};

TEST_F(AgentTest, FailsOverToTheNextDaemonAndReportsItsRunsThere) {
  use_servers({"http://daemon-a:8080", "http://daemon-b:8080"});
  FakeLink& first = connected();
  EXPECT_EQ(first.server, "http://daemon-a:8080");
  first.deliver(command_launch(7));
  ASSERT_EQ(workloads_.runs.size(), 1u);

  first.drop("closed by server with code 1006");  // the active daemon died
  timers_.advance(milliseconds(100));
  ASSERT_EQ(links_.opened.size(), 2u);
  FakeLink& second = links_.last();
  EXPECT_EQ(second.server, "http://daemon-b:8080");
  second.open();
  const auto hellos = second.sent_of<HelloMsg>();
  ASSERT_EQ(hellos.size(), 1u);
  ASSERT_EQ(hellos[0].attempts.size(), 1u) << "the new active daemon hears of the running attempt";
  EXPECT_EQ(hellos[0].attempts[0].attempt_id, 7);
  EXPECT_TRUE(workloads_.runs[0]->terminations.empty());

  // Welcomed there, it stays there: a later drop tries the other one, round the list.
  second.deliver(WelcomeMsg{"test", 1000, ""});
  second.drop();
  timers_.advance(milliseconds(100));
  EXPECT_EQ(links_.last().server, "http://daemon-a:8080");
}

TEST_F(AgentTest, FollowsAStandbysRedirectWithinItsListAndPassesOverA503) {
  use_servers({"http://daemon-a:8080", "http://daemon-b:8080", "http://daemon-c:8080"});
  agent_->start();
  links_.last().drop(net::refused_upgrade_reason(307, "http://daemon-c:8080/v1/agent/connect", "{}"));
  timers_.advance(milliseconds(100));
  EXPECT_EQ(links_.last().server, "http://daemon-c:8080");
  links_.last().drop(net::refused_upgrade_reason(503, "", R"({"role":"standby"})"));
  timers_.advance(milliseconds(200));
  EXPECT_EQ(links_.last().server, "http://daemon-a:8080");
  EXPECT_EQ(agent_->fatal_error(), "");
}

TEST_F(AgentTest, NeverFollowsARedirectOutOfItsList) {
  use_servers({"http://daemon-a:8080", "http://daemon-b:8080"});
  agent_->start();
  links_.last().drop(net::refused_upgrade_reason(307, "http://elsewhere:8080/v1/agent/connect", "{}"));
  timers_.advance(milliseconds(100));
  ASSERT_EQ(links_.opened.size(), 2u);
  EXPECT_EQ(links_.last().server, "http://daemon-b:8080") << "the join token goes to listed daemons only";
  EXPECT_EQ(agent_->fatal_error(), "") << "the other daemons may still take it";
}

TEST_F(AgentTest, ReconnectsAfterTheLinkDropsWithBackoffAndSaysHelloAgainListingItsRuns) {
  FakeLink& first = connected();
  first.deliver(command_launch(7));
  ASSERT_EQ(workloads_.runs.size(), 1u);

  first.drop();
  timers_.advance(milliseconds(99));
  EXPECT_EQ(links_.opened.size(), 1u) << "no reconnect before the backoff";
  timers_.advance(milliseconds(1));
  ASSERT_EQ(links_.opened.size(), 2u);
  EXPECT_EQ(links_.last().token, "join-secret");

  // The daemon is still away: each failure doubles the wait, up to reconnect_max.
  links_.last().drop("connection refused");
  timers_.advance(milliseconds(199));
  EXPECT_EQ(links_.opened.size(), 2u);
  timers_.advance(milliseconds(1));
  ASSERT_EQ(links_.opened.size(), 3u);
  links_.last().drop("connection refused");
  timers_.advance(milliseconds(400));
  ASSERT_EQ(links_.opened.size(), 4u);
  links_.last().drop("connection refused");
  timers_.advance(milliseconds(399));
  EXPECT_EQ(links_.opened.size(), 4u) << "capped at reconnect_max";
  timers_.advance(milliseconds(1));
  ASSERT_EQ(links_.opened.size(), 5u);

  FakeLink& back = links_.last();
  back.open();
  const auto hellos = back.sent_of<HelloMsg>();
  ASSERT_EQ(hellos.size(), 1u);
  EXPECT_EQ(hellos[0].name, "node-a");
  ASSERT_EQ(hellos[0].attempts.size(), 1u) << "the run kept going and is reported";
  EXPECT_EQ(hellos[0].attempts[0].attempt_id, 7);
  EXPECT_TRUE(workloads_.runs[0]->terminations.empty());

  // A welcome resets the backoff.
  back.deliver(WelcomeMsg{"test", 1000, ""});
  back.drop();
  timers_.advance(milliseconds(100));
  EXPECT_EQ(links_.opened.size(), 6u);
}

TEST_F(AgentTest, HeartbeatsOnlyWhileWelcomed) {
  FakeLink& link = connected();
  link.deliver(command_launch(7));
  timers_.advance(milliseconds(1000));
  const auto beats = link.sent_of<HeartbeatMsg>();
  ASSERT_EQ(beats.size(), 1u);
  ASSERT_EQ(beats[0].attempts.size(), 1u);
  EXPECT_EQ(beats[0].attempts[0].attempt_id, 7);

  link.drop();
  timers_.advance(milliseconds(5000));
  EXPECT_EQ(link.sent_of<HeartbeatMsg>().size(), 1u) << "no heartbeat on a dead link";
}

TEST_F(AgentTest, AnExitIsReportedAgainAfterEveryReconnect) {
  FakeLink& first = connected();
  first.deliver(command_launch(7));
  first.deliver(command_launch(8));
  workloads_.runs[0]->exit(exit_code(0));
  settle();
  ASSERT_EQ(first.sent_of<AttemptExitedMsg>().size(), 1u);

  // 8 exits while the daemon is away: nothing to send it on, it waits for the welcome.
  first.drop();
  workloads_.runs[1]->exit(exit_code(3));
  settle();
  timers_.advance(milliseconds(100));
  FakeLink& second = links_.last();
  ASSERT_NE(&second, &first);
  second.open();
  EXPECT_TRUE(second.sent_of<AttemptExitedMsg>().empty()) << "exits go after the welcome, not before";
  EXPECT_TRUE(second.sent_of<HelloMsg>().at(0).attempts.empty());
  second.deliver(WelcomeMsg{"test", 1000, ""});
  auto resent = second.sent_of<AttemptExitedMsg>();
  ASSERT_EQ(resent.size(), 2u) << "the daemon may have missed either: it ignores what it has";
  EXPECT_EQ(resent[0].attempt_id, 7);
  EXPECT_EQ(resent[1].attempt_id, 8);
  EXPECT_EQ(resent[1].exit_code, 3);

  // Without an acknowledgement in the protocol, the next reconnect sends them again.
  second.drop();
  timers_.advance(milliseconds(100));
  welcome(links_.last());
  EXPECT_EQ(links_.last().sent_of<AttemptExitedMsg>().size(), 2u);
}

TEST_F(AgentTest, AKillForAnAttemptItDoesNotRunIsIgnored) {
  FakeLink& link = connected();
  link.deliver(command_launch(7));
  link.deliver(KillMsg{99, "not yours", 10});
  timers_.advance(milliseconds(1000));
  EXPECT_TRUE(workloads_.runs[0]->terminations.empty());
  EXPECT_EQ(workloads_.runs[0]->kills, 0);

  workloads_.runs[0]->exit(exit_code(0));
  settle();
  link.deliver(KillMsg{7, "too late", 10});
  timers_.advance(milliseconds(1000));
  EXPECT_TRUE(workloads_.runs[0]->terminations.empty()) << "a finished attempt is not the daemon's to stop";
  EXPECT_EQ(workloads_.runs[0]->kills, 0);
}

TEST_F(AgentTest, ADuplicateLaunchStartsNothingAndABadOneIsRefusedAsAnExit) {
  FakeLink& link = connected();
  link.deliver(command_launch(7));
  link.deliver(command_launch(7));  // the daemon resends after a reconnect
  EXPECT_EQ(workloads_.runs.size(), 1u);
  EXPECT_EQ(link.sent_of<AttemptStartedMsg>().size(), 1u);

  LaunchMsg outside = command_launch(8);
  outside.checkpoint_dir = "relative/ckpt";
  link.deliver(outside);
  EXPECT_EQ(workloads_.runs.size(), 1u) << "refused before anything ran";
  const auto exits = link.sent_of<AttemptExitedMsg>();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].attempt_id, 8);
  EXPECT_EQ(exits[0].exit_code, 127);
  EXPECT_NE(exits[0].reason.find("launch refused"), std::string::npos) << exits[0].reason;
}

TEST_F(AgentTest, AKillTerminatesThenKillsAfterTheGrace) {
  FakeLink& link = connected();
  link.deliver(command_launch(7));
  link.deliver(KillMsg{7, "cancelled by alice", 2000});
  const auto& run = *workloads_.runs[0];
  ASSERT_EQ(run.terminations, std::vector<std::string>{"cancelled by alice"});
  timers_.advance(milliseconds(1999));
  EXPECT_EQ(run.kills, 0) << "still within the grace";
  timers_.advance(milliseconds(1));
  EXPECT_EQ(run.kills, 1);
}

// Fencing, the agent's half: after a reconnect it lists the run it kept; the daemon, which gave that
// attempt's job to other nodes meanwhile, answers with a kill, and the agent stops the stale run
// (terminate, kill after the grace) and reports its exit, while the job's new attempt runs beside it.
TEST_F(AgentTest, AStaleRunListedAfterAReconnectIsStoppedByTheDaemonsFencingKill) {
  FakeLink& first = connected();
  first.deliver(command_launch(7));
  first.drop();
  timers_.advance(milliseconds(100));
  FakeLink& back = links_.last();
  back.open();
  ASSERT_EQ(back.sent_of<HelloMsg>().at(0).attempts.at(0).attempt_id, 7) << "the kept run is listed";
  back.deliver(WelcomeMsg{"test", 1000, ""});
  LaunchMsg retry = command_launch(8);
  retry.job_id = command_launch(7).job_id;  // the same job's next attempt, placed here this time
  back.deliver(retry);
  back.deliver(KillMsg{7, "fenced: attempt 7 is not current", 2000});

  const RunRecord& stale = *workloads_.runs[0];
  ASSERT_EQ(stale.terminations, std::vector<std::string>{"fenced: attempt 7 is not current"});
  timers_.advance(milliseconds(2000));
  EXPECT_EQ(stale.kills, 1) << "a stale run that ignores SIGTERM is killed when the grace ends";
  stale.exit(exit_code(137));
  settle();
  const auto exits = back.sent_of<AttemptExitedMsg>();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].attempt_id, 7);
  EXPECT_TRUE(workloads_.runs[1]->terminations.empty()) << "the current attempt is not touched";
  EXPECT_EQ(workloads_.runs[1]->kills, 0);
}

// Requeue and preemption: the run saves first, and only then gets the usual terminate-then-kill.
TEST_F(AgentTest, ACheckpointingKillSavesThenTerminatesThenKills) {
  FakeLink& link = connected();
  link.deliver(command_launch(7));
  link.deliver(KillMsg{7, "preempted", 2000, true});
  const auto& run = *workloads_.runs[0];
  ASSERT_EQ(run.saves, std::vector<std::string>{"preempted"});
  EXPECT_TRUE(run.terminations.empty()) << "terminated before it had its grace to save";
  timers_.advance(milliseconds(2000));
  EXPECT_EQ(run.terminations, std::vector<std::string>{"preempted"});
  EXPECT_EQ(run.kills, 0);
  timers_.advance(milliseconds(2000));
  EXPECT_EQ(run.kills, 1);
}

// Command runs as real processes (agent/command_run.h), for what only a process shows: the
// signals it gets. The timers stay fake, so the grace ends when the test says.
class ProcessWorkloads final : public Workloads {
 public:
  ProcessWorkloads(boost::asio::io_context& io, const std::filesystem::path& registry_dir)
      : io_(io), processes_(registry_dir.string()) {}
  std::unique_ptr<AttemptRun> start_run(const LaunchMsg& launch, const std::string& attempt_dir, int,
                                        ExitCallback on_exit) override {
    return std::make_unique<CommandRun>(launch, attempt_dir, std::nullopt, no_cgroups_, processes_, io_,
                                        std::move(on_exit));
  }
  std::unique_ptr<HealthTask> start_health_check(const HealthCheckMsg&, HealthTask::Done) override {
    ADD_FAILURE() << "no health checks in these tests";
    return nullptr;
  }

 private:
  boost::asio::io_context& io_;
  ProcessRegistry processes_;
  Cgroups no_cgroups_;  // process groups, as before cgroups
};

class AgentProcessTest : public AgentTest {
 protected:
  AgentProcessTest() : processes_(io_, work_dir_ / "registry") {
    AgentConfig config;
    config.servers = {"http://daemon-a:8080"};
    config.name = "node-a";
    config.join_token = "join-secret";
    config.work_dir = work_dir_.string();
    agent_ = std::make_unique<Agent>(io_, config, device_, AgentDeps{links_, processes_, timers_});
  }
  // The agent's runs use the workloads' process registry: they go first.
  ~AgentProcessTest() override {
    agent_.reset();
    settle();
  }
  std::string signals() const {
    std::ifstream in(work_dir_ / "signals");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // Runs the agent's I/O until `done` holds (the process acts on its own time), at most 10 s.
  bool wait_for(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      settle();
      std::this_thread::sleep_for(milliseconds(10));
    }
    return true;
  }

  ProcessWorkloads processes_;
};

// Preemption of a command job: SIGUSR1 to ask for a checkpoint, with
// TRAINYARD_PREEMPT_GRACE_S in its environment saying how long it has; SIGTERM only once that grace
// has passed.
TEST_F(AgentProcessTest, ACheckpointingKillOfACommandSendsSigusr1ThenSigtermAfterTheGrace) {
  FakeLink& link = connected();
  LaunchMsg launch = command_launch(7);
  launch.preempt_grace_ms = 7000;
  launch.checkpoint_dir = (work_dir_ / "checkpoints").string();
  launch.command.env = {{"SIGNALS", (work_dir_ / "signals").string()}};
  launch.command.argv = {"/bin/sh", "-c",
                         "trap 'echo USR1 >> \"$SIGNALS\"' USR1\n"
                         "trap 'echo TERM >> \"$SIGNALS\"; exit 0' TERM\n"
                         "echo \"ready grace=$TRAINYARD_PREEMPT_GRACE_S\" >> \"$SIGNALS\"\n"
                         "while :; do sleep 0.05; done"};
  link.deliver(launch);
  ASSERT_TRUE(wait_for([&] { return !signals().empty(); })) << "the command never started";
  EXPECT_EQ(signals(), "ready grace=7\n");

  link.deliver(KillMsg{7, "preempted", 7000, true});
  ASSERT_TRUE(wait_for([&] { return signals().find("USR1") != std::string::npos; })) << "no SIGUSR1";
  EXPECT_EQ(signals(), "ready grace=7\nUSR1\n") << "only SIGUSR1 within the grace";
  timers_.advance(milliseconds(6999));
  EXPECT_EQ(signals(), "ready grace=7\nUSR1\n");

  timers_.advance(milliseconds(1));
  ASSERT_TRUE(wait_for([&] { return !link.sent_of<AttemptExitedMsg>().empty(); })) << "it never exited";
  EXPECT_EQ(signals(), "ready grace=7\nUSR1\nTERM\n");
  EXPECT_EQ(link.sent_of<AttemptExitedMsg>()[0].exit_code, 0) << "its TERM trap exited cleanly, not killed";
}

TEST_F(AgentTest, ARunThatExitsWithinTheGraceIsNotKilled) {
  FakeLink& link = connected();
  link.deliver(command_launch(7));
  link.deliver(KillMsg{7, "cancelled", 2000});
  auto run = workloads_.runs[0];
  timers_.advance(milliseconds(500));
  run->exit(exit_code(143));
  settle();
  timers_.advance(milliseconds(5000));
  EXPECT_EQ(run->kills, 0);
  const auto exits = link.sent_of<AttemptExitedMsg>();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, 143);
}

// The agent measures every interval on its timers, so a system clock stepped an hour either way
// (NTP, an operator) neither stops its heartbeats, which would make the daemon declare the node
// down, nor delays a reconnect or the kill at the end of a grace.
class AgentClockStepTest : public AgentTest, public ::testing::WithParamInterface<int> {
 protected:
  milliseconds jump() const { return std::chrono::hours(GetParam()); }
};

TEST_P(AgentClockStepTest, HeartbeatsReconnectsAndKillGraceKeepTheirIntervals) {
  FakeLink& link = connected();
  link.deliver(command_launch(7));
  timers_.clock.step_system_clock(jump());
  timers_.advance(milliseconds(3000));
  EXPECT_EQ(link.sent_of<HeartbeatMsg>().size(), 3u) << "one heartbeat a second, whatever the system clock says";

  link.deliver(KillMsg{7, "cancelled", 2000});
  timers_.clock.step_system_clock(jump());
  timers_.advance(milliseconds(1999));
  EXPECT_EQ(workloads_.runs[0]->kills, 0) << "killed within the grace";
  timers_.advance(milliseconds(1));
  EXPECT_EQ(workloads_.runs[0]->kills, 1) << "the grace outlasted 2 s";

  link.drop();
  timers_.clock.step_system_clock(jump());
  timers_.advance(milliseconds(100));
  EXPECT_EQ(links_.opened.size(), 2u) << "the reconnect waited past its backoff";
}

INSTANTIATE_TEST_SUITE_P(BackAndForward, AgentClockStepTest, ::testing::Values(-1, 1),
                         [](const auto& info) { return info.param < 0 ? "SteppedBack" : "SteppedForward"; });

}  // namespace
}  // namespace trainyard::agent

namespace trainyard::agent {
namespace {

// Fencing (agent/agent.h): welcomed with a 1 s fence and 100 ms heartbeats.
class AgentFenceTest : public AgentTest {
 protected:
  FakeLink& fenced_link() {
    agent_->start();
    FakeLink& link = links_.last();
    link.open();
    WelcomeMsg welcome{"test", 100, ""};
    welcome.fence_after_ms = 1000;
    link.deliver(welcome);
    return link;
  }
  // Acknowledges every heartbeat sent on `link` so far.
  static void ack_all(FakeLink& link) {
    for (const auto& hb : link.sent_of<HeartbeatMsg>()) link.deliver(HeartbeatAckMsg{hb.seq});
  }
};

TEST_F(AgentFenceTest, AnAcknowledgedNodeKeepsItsAttempts) {
  FakeLink& link = fenced_link();
  link.deliver(command_launch(7));
  for (int i = 0; i < 50; ++i) {
    timers_.advance(milliseconds(100));
    ack_all(link);
  }
  ASSERT_EQ(workloads_.runs.size(), 1u);
  EXPECT_TRUE(workloads_.runs[0]->terminations.empty()) << "5 s of acknowledged heartbeats";
  const auto heartbeats = link.sent_of<HeartbeatMsg>();
  ASSERT_GE(heartbeats.size(), 2u);
  EXPECT_LT(heartbeats[0].seq, heartbeats[1].seq) << "numbered";
}

TEST_F(AgentFenceTest, ANodeWhoseHeartbeatsGoUnacknowledgedStopsItsAttemptsAtTheFenceTime) {
  FakeLink& link = fenced_link();
  link.deliver(command_launch(7));
  timers_.advance(milliseconds(300));
  ack_all(link);  // the heartbeat sent at 300 ms is the last the daemon hears
  const std::size_t heard = link.sent_of<HeartbeatMsg>().size();
  // The daemon keeps sending (a one-way cut): a launch or log request is not an ack.
  link.deliver(LogRequestMsg{1, 7, 10, 1000});
  timers_.advance(milliseconds(999));
  EXPECT_TRUE(workloads_.runs[0]->terminations.empty()) << "within the fence time of the last acked send";
  timers_.advance(milliseconds(1));
  ASSERT_EQ(workloads_.runs[0]->terminations.size(), 1u) << "fenced 1 s after the acked heartbeat was sent";
  EXPECT_EQ(workloads_.runs[0]->terminations[0].rfind("fenced: the daemon acknowledged no heartbeat", 0), 0u)
      << workloads_.runs[0]->terminations[0];
  EXPECT_EQ(workloads_.runs[0]->kills, 0);
  // Then the launch's kill grace (10 s by default), then SIGKILL.
  timers_.advance(milliseconds(10000));
  EXPECT_EQ(workloads_.runs[0]->kills, 1);
  EXPECT_GT(link.sent_of<HeartbeatMsg>().size(), heard) << "it goes on heartbeating";
}

TEST_F(AgentFenceTest, AStaleAckOfAnOlderHeartbeatDoesNotExtendTheFence) {
  FakeLink& link = fenced_link();
  link.deliver(command_launch(7));
  timers_.advance(milliseconds(500));
  const auto heartbeats = link.sent_of<HeartbeatMsg>();
  ASSERT_GE(heartbeats.size(), 5u);
  link.deliver(HeartbeatAckMsg{heartbeats[4].seq});  // sent at 500 ms
  link.deliver(HeartbeatAckMsg{heartbeats[0].seq});  // late, sent at 100 ms
  timers_.advance(milliseconds(999));
  EXPECT_TRUE(workloads_.runs[0]->terminations.empty());
  timers_.advance(milliseconds(1));
  EXPECT_EQ(workloads_.runs[0]->terminations.size(), 1u);
}

TEST_F(AgentFenceTest, ALostLinkFencesToo) {
  FakeLink& link = fenced_link();
  link.deliver(command_launch(7));
  link.drop("closed by server with code 1006");
  timers_.advance(milliseconds(999));
  EXPECT_TRUE(workloads_.runs[0]->terminations.empty());
  timers_.advance(milliseconds(1));
  EXPECT_EQ(workloads_.runs[0]->terminations.size(), 1u) << "cut off by a closed link, still fenced";
}

// A paused or cut-off daemon whose connection stays open: the agent leaves it at half the fence
// time, for the next server (a standby that takes over), and is back before it must fence.
TEST_F(AgentFenceTest, ALinkWhoseDaemonStopsAnsweringIsDroppedForTheNextServerBeforeTheFence) {
  use_servers({"http://daemon-a:8080", "http://daemon-b:8080"});
  FakeLink& link = fenced_link();
  link.deliver(command_launch(7));
  for (int i = 0; i < 3; ++i) {
    timers_.advance(milliseconds(100));
    ack_all(link);  // the last ack arrives at 300 ms
  }
  timers_.advance(milliseconds(599));
  EXPECT_FALSE(link.abort_reason) << "half the 1 s fence, and the 100 ms to confirm, have not passed since the last answer";
  timers_.advance(milliseconds(1));
  ASSERT_TRUE(link.abort_reason) << "no answer for half the fence time and a heartbeat interval";
  EXPECT_EQ(*link.abort_reason, "the daemon answered nothing for 600 ms");
  link.drop(*link.abort_reason);
  timers_.advance(milliseconds(100));  // the reconnect backoff
  ASSERT_EQ(links_.opened.size(), 2u);
  FakeLink& standby = links_.last();
  EXPECT_EQ(standby.server, "http://daemon-b:8080") << "a daemon that stopped answering counts as unreachable";
  standby.open();
  WelcomeMsg welcome{"test", 100, ""};
  welcome.fence_after_ms = 1000;
  standby.deliver(welcome);
  for (int i = 0; i < 20; ++i) {
    timers_.advance(milliseconds(100));
    ack_all(standby);
  }
  EXPECT_TRUE(workloads_.runs[0]->terminations.empty()) << "welcomed by the new daemon before the fence time";
  ASSERT_FALSE(standby.sent_of<HelloMsg>().empty());
  EXPECT_EQ(standby.sent_of<HelloMsg>()[0].attempts.size(), 1u) << "it reports the attempt it still runs";
}

TEST_F(AgentFenceTest, AConnectionThatIsNeverWelcomedIsDroppedAtAQuarterOfTheFenceTime) {
  use_servers({"http://daemon-a:8080", "http://daemon-b:8080"});
  FakeLink& link = fenced_link();
  link.drop();
  timers_.advance(milliseconds(100));
  FakeLink& frozen = links_.last();  // accepted by the kernel, never upgraded
  frozen.open();
  timers_.advance(milliseconds(311));
  EXPECT_FALSE(frozen.abort_reason);
  timers_.advance(milliseconds(1));
  ASSERT_TRUE(frozen.abort_reason);
  EXPECT_EQ(*frozen.abort_reason, "the daemon answered nothing for 312 ms") << "250 ms, and a quarter of that to confirm";
}

// An agent stalled past its deadline finds the daemon's answer queued: the answer arrives between
// the deadline and its confirmation, and the link stays.
TEST_F(AgentFenceTest, AnAnswerReadJustAfterTheDeadlineKeepsTheLink) {
  FakeLink& link = fenced_link();
  timers_.advance(milliseconds(100));
  ack_all(link);
  timers_.advance(milliseconds(550));  // past the 500 ms deadline, within its 100 ms confirmation
  ack_all(link);
  timers_.advance(milliseconds(100));
  EXPECT_FALSE(link.abort_reason);
}

TEST_F(AgentFenceTest, AnAnsweringDaemonKeepsTheLink) {
  FakeLink& link = fenced_link();
  for (int i = 0; i < 100; ++i) {
    timers_.advance(milliseconds(100));
    ack_all(link);
  }
  EXPECT_FALSE(link.abort_reason);
  EXPECT_EQ(links_.opened.size(), 1u);
}

TEST_F(AgentFenceTest, ANodeWithoutAFenceTimeNeverFences) {
  FakeLink& unfenced = connected();  // a daemon with --fence-ms 0 sends none
  unfenced.deliver(command_launch(8));
  timers_.advance(milliseconds(60000));
  EXPECT_TRUE(workloads_.runs[0]->terminations.empty());
}

}  // namespace
}  // namespace trainyard::agent
