// Fencing (agent/agent.h, daemon/fence_timing.h): a node cut off from the daemon stops its attempts
// itself before the daemon could replace them, so no attempt runs twice. The daemon is frozen
// (SIGSTOP) here: its agent's heartbeats then go unacknowledged on a link that stays open, as in a
// partition that drops packets without closing connections.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <gtest/gtest.h>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

TEST(Fencing, AnAgentWhoseHeartbeatsGoUnacknowledgedStopsItsAttemptBeforeTheNodeTimeout) {
  Cluster cluster;
  // 100 ms heartbeats, a 3 s node timeout, a 0.5 s kill grace and a 1 s fence: 1 + 0.5 + 0.3 <= 3.
  cluster.start_daemon({"--node-timeout-ms", "3000", "--kill-grace-ms", "500", "--fence-ms", "1000"});
  cluster.start_agent("node-a");
  cluster.wait_for_nodes(1);
  const std::string shared = cluster.shared_dir();
  // The first attempt records its pid and runs until stopped; its retry ends at once.
  const std::string script = "if [ -e " + shared + "/first.pid ]; then echo second attempt; exit 0; fi; "
                             "echo $$ > " + shared + "/first.tmp && mv " + shared + "/first.tmp " + shared +
                             "/first.pid; exec sleep 600";
  const auto id = cluster.submit({{"name", "fenced"}, {"nodes", 1}, {"command", {{"argv", {"/bin/sh", "-c", script}}}}});
  ASSERT_TRUE(eventually([&] { return fs::exists(shared + "/first.pid"); }, 30s)) << cluster.daemon_log();
  const pid_t pid = static_cast<pid_t>(std::stol(read_text(shared + "/first.pid")));

  cluster.daemon().signal(SIGSTOP);
  const auto frozen_at = std::chrono::steady_clock::now();
  // The daemon gives up on a node 3 s after the last heartbeat it heard: the attempt is gone sooner.
  const bool stopped = eventually([&] { return ::kill(pid, 0) != 0; }, 2900ms);
  const auto stopped_after = std::chrono::steady_clock::now() - frozen_at;
  cluster.daemon().signal(SIGCONT);
  ASSERT_TRUE(stopped) << "the attempt outlived the node timeout:\n" << read_text(cluster.dir() + "/agent-node-a.log");
  // Stopped by the fence (1 s after the last acknowledged heartbeat was sent, at most 100 ms before
  // the freeze), not by anything sooner.
  EXPECT_GE(stopped_after, 850ms);
  EXPECT_NE(read_text(cluster.dir() + "/agent-node-a.log").find("event=fenced node=node-a attempts=1"),
            std::string::npos);

  // Awake, the daemon hears why the attempt ended: the node's fault, not the job's, so it is retried
  // without using the job's one attempt.
  const Json job = cluster.wait_job_state(id, "SUCCEEDED", 30s);
  const Json attempts = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts").body["attempts"];
  ASSERT_EQ(attempts.size(), 2u) << attempts.dump(2);
  EXPECT_EQ(attempts[0]["failure_class"], "node_lost") << attempts.dump(2);
  EXPECT_TRUE(attempts[0]["infrastructure"].get<bool>()) << attempts.dump(2);
  EXPECT_NE(attempts[0].value("reason", "").find("fenced: the daemon acknowledged no heartbeat"), std::string::npos)
      << attempts.dump(2);
}

}  // namespace
}  // namespace trainyard::testing
