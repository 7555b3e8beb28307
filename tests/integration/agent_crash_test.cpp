// A crashed agent's job is replaced without waiting out the kill grace: the dead agent's fence
// keeper stops what is left of its attempts and tells the daemon they are gone (agent/fence_keeper.h,
// agent/stop_report.h), which the daemon otherwise waits 1.25 kill graces to assume
// (daemon/policy/recovery.h).
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// A 2-node command job. The first attempt's ranks each leave a process that escapes their process
// group (setsid) and record both pids; the replacement's ranks first write down which of those
// still run (neither exited nor a zombie), then say they started.
Json recorded_job(const std::string& shared) {
  const auto publish = [&](const std::string& name, const std::string& value) {
    return "echo " + value + " > " + shared + "/" + name + ".tmp && mv " + shared + "/" + name + ".tmp " + shared + "/" + name;
  };
  const std::string first =
      "setsid sh -c '" + publish("escapee-$RANK", "$$") + "; exec sleep 601' & " + publish("rank-$RANK", "$$") +
      "; exec sleep 600";
  const std::string replacement =
      "for f in " + shared + "/rank-* " + shared + "/escapee-*; do p=$(cat $f); "
      "s=$(sed 's/.*) //' /proc/$p/stat 2>/dev/null | cut -c1); "
      "case \"$s\" in ''|Z) ;; *) echo \"$f pid $p state $s\" >> " + shared + "/still-running ;; esac; done; " +
      publish("replacement-$RANK", "started") + "; exec sleep 600";
  const std::string script = "if [ \"$TRAINYARD_ATTEMPT\" = 1 ]; then " + first + "; else " + replacement + "; fi";
  return shell_job("crash", script, 2);
}

TEST(AgentCrash, AKilledAgentsKeeperReportsItsRanksGoneAndTheReplacementStartsLongBeforeTheKillGrace) {
  if (::geteuid() != 0) GTEST_SKIP() << "the agent must be root to make cgroups";
  Cluster cluster;
  // Without the keeper's word the daemon would wait 37.5 s (a 30 s kill grace and its quarter); the
  // node timeout is further still. One warm spare takes the dead node's place.
  cluster.start_daemon({"--kill-grace-ms", "30000", "--node-timeout-ms", "60000", "--warm-spares", "1"});
  for (const char* name : {"trn-0", "trn-1", "trn-2"}) cluster.start_agent(name);
  cluster.wait_for_nodes(3);
  if (read_text(cluster.dir() + "/agent-trn-0.log").find("cgroups=v") == std::string::npos) {
    GTEST_SKIP() << "cgroups unavailable here";
  }
  const std::string shared = cluster.shared_dir();
  const auto id = cluster.submit(recorded_job(shared));
  ASSERT_TRUE(eventually([&] { return fs::exists(shared + "/escapee-0") && fs::exists(shared + "/escapee-1") &&
                                      fs::exists(shared + "/rank-0") && fs::exists(shared + "/rank-1"); },
                         30s))
      << cluster.daemon_log();
  const std::string victim = attempts_of(cluster, id)[0]["nodes"][0];

  const auto killed_at = std::chrono::steady_clock::now();
  cluster.stop_agent(victim, SIGKILL);
  const bool replaced = eventually(
      [&] { return fs::exists(shared + "/replacement-0") && fs::exists(shared + "/replacement-1"); }, 20s);
  const auto replaced_after = std::chrono::steady_clock::now() - killed_at;
  ASSERT_TRUE(replaced) << "no replacement within 20 s of the kill; attempts: " << attempts_of(cluster, id).dump(2)
                        << "\nagent log:\n" << read_text(cluster.dir() + "/agent-" + victim + ".log");
  std::cout << "replacement started "
            << std::chrono::duration_cast<std::chrono::milliseconds>(replaced_after).count() << " ms after the kill\n";
  // The command's ranks share no data plane, so no peer sees the close: the disconnect grace (2 s)
  // says the agent is gone for good, the keeper that its processes are.
  EXPECT_LT(replaced_after, 10s) << "the keeper's report, not the 37.5 s kill grace and margin, let it start";

  EXPECT_FALSE(fs::exists(shared + "/still-running"))
      << "the replacement started beside the first attempt's processes:\n" << read_text(shared + "/still-running");
  const Json attempts = attempts_of(cluster, id);
  ASSERT_EQ(attempts.size(), 2u) << attempts.dump(2);
  EXPECT_EQ(attempts[0]["failure_class"], "node_lost") << attempts.dump(2);
  EXPECT_TRUE(attempts[0]["infrastructure"].get<bool>()) << attempts.dump(2);
  EXPECT_NE(attempts[0].value("reason", "").find("the agent of node " + victim +
                                                 " disconnected and did not reconnect within 2000 ms; its fence keeper "
                                                 "stopped the attempt's processes"),
            std::string::npos)
      << attempts.dump(2);
  for (const auto& node : attempts[1]["nodes"]) EXPECT_NE(node, victim);
  EXPECT_NE(read_text(cluster.dir() + "/agent-" + victim + ".log").find("event=fence_keeper_reported node=" + victim),
            std::string::npos)
      << read_text(cluster.dir() + "/agent-" + victim + ".log");
}

}  // namespace
}  // namespace trainyard::testing
