// The agent service against fakes of its link, workloads and timers (agent/agent_deps.h): the
// reconnect policy, exit resend, what it refuses or ignores from the daemon, and kill grace. No
// sockets, no processes, no real time: the fake timers fire only when a test advances them.
#include "agent/agent.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "agent/command_run.h"
#include "tests/unit/agent/agent_harness.h"

namespace trainyard::agent::testing {
namespace {

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

// A daemon at a connection cap answers 429 or 503 with Retry-After: the agent waits that long, not
// just its backoff's 100 ms.
TEST_F(AgentTest, WaitsAsLongAsARefusalsRetryAfterSays) {
  agent_->start();
  links_.last().drop(net::refused_upgrade_reason(429, "", R"({"error":{"code":"too_many_connections"}})", "3"));
  timers_.advance(milliseconds(2999));
  EXPECT_EQ(links_.opened.size(), 1u) << "reconnected before the Retry-After";
  timers_.advance(milliseconds(1));
  EXPECT_EQ(links_.opened.size(), 2u);
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

TEST_F(AgentTest, ReconnectsAreSpreadOverTheSecondHalfOfEachWaitWithJitter) {
  use_servers({"http://daemon-a:8080"}, Jitter::equal);
  std::set<int> waited;
  connected();
  for (int i = 0; i < 20; ++i) {
    links_.last().drop();  // welcomed: its next wait is the first again
    const std::size_t opened = links_.opened.size();
    int ms = 0;
    while (links_.opened.size() == opened && ms < 1000) {
      timers_.advance(milliseconds(1));
      ++ms;
    }
    ASSERT_GE(ms, 50) << "never before half the first wait";
    ASSERT_LE(ms, 100) << "never after the whole of it";
    waited.insert(ms);
    welcome(links_.last());
  }
  EXPECT_GT(waited.size(), 3u) << "spread, not one instant for every agent";
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
  std::unique_ptr<AttemptRun> start_run(const LaunchMsg& launch, const std::string&, const std::string& attempt_dir,
                                        int, ExitCallback on_exit) override {
    return std::make_unique<CommandRun>(launch, attempt_dir, "", std::nullopt, no_cgroups_, nullptr, processes_, io_,
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

// procs_per_node: the node's part of the gang is several processes, each with its own rank, as
// torchrun --nproc-per-node starts them.
TEST_F(AgentProcessTest, EachLocalProcessGetsItsOwnRankAndShareOfTheCores) {
  FakeLink& link = connected();
  LaunchMsg launch = command_launch(7);
  launch.rank = 1;
  launch.world_size = 2;
  launch.cores = 8;
  launch.command.procs_per_node = 3;
  launch.command.env = {{"OUT", (work_dir_ / "ranks").string()}};
  launch.command.argv = {"/bin/sh", "-c",
                         "echo \"$RANK $LOCAL_RANK/$LOCAL_WORLD_SIZE of $WORLD_SIZE node $NODE_RANK/$GROUP_RANK "
                         "cores $TRAINYARD_CORES $TRAINYARD_VISIBLE_CORES $NEURON_RT_VISIBLE_CORES\" >> \"$OUT\""};
  link.deliver(launch);
  ASSERT_TRUE(wait_for([&] { return !link.sent_of<AttemptExitedMsg>().empty(); })) << "the processes never ended";
  EXPECT_EQ(link.sent_of<AttemptExitedMsg>()[0].exit_code, 0);
  std::ifstream in(work_dir_ / "ranks");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<std::string>{"3 0/3 of 6 node 1/1 cores 3 0-2 0-2", "4 1/3 of 6 node 1/1 cores 3 3-5 3-5",
                                             "5 2/3 of 6 node 1/1 cores 2 6-7 6-7"}));
}

TEST_F(AgentProcessTest, ALocalProcessThatFailsEndsTheOthersAndSpeaksForTheNode) {
  FakeLink& link = connected();
  LaunchMsg launch = command_launch(7);
  launch.command.procs_per_node = 3;
  launch.command.argv = {"/bin/sh", "-c", "if [ $LOCAL_RANK = 1 ]; then exit 3; fi; exec sleep 600"};
  link.deliver(launch);
  ASSERT_TRUE(wait_for([&] { return !link.sent_of<AttemptExitedMsg>().empty(); }))
      << "the other processes outlived the failed one";
  const AttemptExitedMsg exit = link.sent_of<AttemptExitedMsg>()[0];
  EXPECT_EQ(exit.exit_code, 3);
  EXPECT_EQ(exit.reason, "local process 1 of 3 exited with code 3");
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// sbatch -o/-e: the job's output reaches its own files, Slurm's patterns filled in, and stays in the
// log the agent keeps, its last lines included in the exit's tail.
TEST_F(AgentProcessTest, OutputAndErrorAreCopiedToTheJobsFilesAndKeptInItsLog) {
  FakeLink& link = connected();
  const std::filesystem::path dir = work_dir_ / "run";
  std::filesystem::create_directories(dir);
  LaunchMsg launch = command_launch(7);
  launch.job_name = "train";
  launch.node = "node-a";
  launch.command.workdir = dir.string();
  launch.command.output = "out-%j-%x.txt";
  launch.command.error = "err-%N.txt";
  launch.command.argv = {"/bin/sh", "-c", "echo to-out; echo to-err >&2; echo last-line"};
  link.deliver(launch);
  ASSERT_TRUE(wait_for([&] { return !link.sent_of<AttemptExitedMsg>().empty(); })) << "it never exited";
  const AttemptExitedMsg exit = link.sent_of<AttemptExitedMsg>()[0];
  EXPECT_EQ(exit.exit_code, 0) << exit.reason;
  EXPECT_EQ(file_text(dir / "out-107-train.txt"), "to-out\nlast-line\n");
  EXPECT_EQ(file_text(dir / "err-node-a.txt"), "to-err\n");
  for (const char* line : {"to-out", "to-err", "last-line"}) {
    EXPECT_NE(exit.log_tail.find(line), std::string::npos) << "the log lacks " << line << ": " << exit.log_tail;
  }
}

TEST_F(AgentProcessTest, AnOutputFileThatCannotBeOpenedFailsTheLaunchNamingIt) {
  FakeLink& link = connected();
  LaunchMsg launch = command_launch(7);
  launch.command.workdir = work_dir_.string();
  launch.command.output = "no-such-dir/out.txt";
  launch.command.argv = {"/bin/sh", "-c", "echo never"};
  link.deliver(launch);
  ASSERT_TRUE(wait_for([&] { return !link.sent_of<AttemptExitedMsg>().empty(); })) << "it never exited";
  const AttemptExitedMsg exit = link.sent_of<AttemptExitedMsg>()[0];
  EXPECT_EQ(exit.exit_code, 127);
  EXPECT_NE(exit.reason.find("no-such-dir/out.txt (--output)"), std::string::npos) << exit.reason;
  EXPECT_NE(exit.reason.find("No such file or directory"), std::string::npos) << exit.reason;
}

// Only the batch script's node writes Slurm's file: another rank's output stays in its own log
// unless the pattern names the node. A FIFO is not a file the agent writes to (nobody may read it).
TEST_F(AgentProcessTest, OnlyTheFirstRankWritesAFileThatDoesNotNameTheNodeAndNoRankWritesAFifo) {
  FakeLink& link = connected();
  const std::filesystem::path dir = work_dir_ / "run";
  std::filesystem::create_directories(dir);
  LaunchMsg second = command_launch(7);
  second.rank = 1;
  second.world_size = 2;
  second.command.workdir = dir.string();
  second.command.output = "shared.txt";
  second.command.argv = {"/bin/sh", "-c", "echo from-rank-1"};
  link.deliver(second);
  ASSERT_TRUE(wait_for([&] { return link.sent_of<AttemptExitedMsg>().size() == 1; })) << "it never exited";
  EXPECT_FALSE(std::filesystem::exists(dir / "shared.txt"));
  EXPECT_NE(link.sent_of<AttemptExitedMsg>()[0].log_tail.find("from-rank-1"), std::string::npos);

  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0666), 0);
  const int reader = ::open((dir / "fifo").c_str(), O_RDONLY | O_NONBLOCK);  // opened, never read
  ASSERT_GE(reader, 0);
  LaunchMsg first = command_launch(8);
  first.command.workdir = dir.string();
  first.command.output = "fifo";
  first.command.argv = {"/bin/sh", "-c", "echo kept-in-the-log"};
  link.deliver(first);
  ASSERT_TRUE(wait_for([&] { return link.sent_of<AttemptExitedMsg>().size() == 2; })) << "it never exited";
  const AttemptExitedMsg exit = link.sent_of<AttemptExitedMsg>()[1];
  EXPECT_EQ(exit.exit_code, 0) << exit.reason;
  EXPECT_NE(exit.log_tail.find("fifo is not a regular file"), std::string::npos) << exit.log_tail;
  EXPECT_NE(exit.log_tail.find("kept-in-the-log"), std::string::npos) << exit.log_tail;
  char byte = 0;
  EXPECT_LE(::read(reader, &byte, 1), 0) << "the agent wrote to the FIFO";
  ::close(reader);
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
}  // namespace trainyard::agent::testing
