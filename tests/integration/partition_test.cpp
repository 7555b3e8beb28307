// Gray failures on hosts built out of network namespaces (tests/integration/host_network.h): the
// daemon, each agent and the test itself on a host of its own, reaching each other at their
// addresses. A node whose link fails keeps running, so only its own fence (agent/agent.h,
// daemon/policy/fence_timing.h) keeps its job from running twice.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <gtest/gtest.h>

#include "proto/time.h"
#include "tests/integration/cluster.h"
#include "tests/integration/host_network.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// Builds the hosts (the test is "client"), or skips where namespaces cannot be made.
class HostsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const auto why = HostNetwork::unavailable()) GTEST_SKIP() << *why;
    network_.emplace();
    for (const char* host : {"client", "daemon", "node-a", "node-b", "node-c"}) network_->add_host(host);
    cluster_.emplace(*network_);
  }
  void TearDown() override {
    cluster_.reset();  // its processes live on the hosts: they go first
    network_.reset();
  }

  std::optional<HostNetwork> network_;
  std::optional<Cluster> cluster_;
};

std::string attempts_text(Cluster& cluster, std::int64_t id) {
  return cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts").body.dump(2);
}

TEST_F(HostsTest, RanksReachEachOtherAtTheirNodesAddresses) {
  Cluster& cluster = *cluster_;
  cluster.start_daemon();
  cluster.start_agent("node-a");
  cluster.start_agent("node-b");
  cluster.wait_for_nodes(2);
  const Json nodes = cluster.api("GET", "/v1/nodes").body["nodes"];
  for (const auto& node : nodes) {
    const std::string name = node["name"];
    EXPECT_EQ(node["data_addr"].get<std::string>().rfind(network_->address(name) + ":", 0), 0u) << node.dump();
  }

  // Each rank says where its gang meets; the simulated job's all-reduce crosses the hosts' link.
  const std::string shared = cluster.shared_dir();
  const std::int64_t command = cluster.submit(
      {{"name", "where"}, {"nodes", 2}, {"command", {{"argv", {"/bin/sh", "-c", "echo $MASTER_ADDR > " + shared + "/master-$RANK"}}}}});
  cluster.wait_job_state(command, "SUCCEEDED", 60s);
  const Json attempt = cluster.api("GET", "/v1/jobs/" + std::to_string(command) + "/attempts").body["attempts"][0];
  const std::string first_node = attempt["nodes"][0];
  EXPECT_EQ(read_text(shared + "/master-0"), network_->address(first_node));
  EXPECT_EQ(read_text(shared + "/master-1"), network_->address(first_node));

  const std::int64_t simulated = cluster.submit(
      {{"name", "gang"}, {"nodes", 2}, {"kind", "simulated"}, {"workload", {{"steps", 20}, {"step_ms", 10}}}});
  cluster.wait_job_state(simulated, "SUCCEEDED", 60s);
}

// How the node loses the daemon: its link down at the switch, or only its own packets to the
// daemon dropped (the daemon's still arrive, but TCP gets no acknowledgements back).
enum class Loss { link_cut, one_way };

class PartitionTest : public HostsTest, public ::testing::WithParamInterface<Loss> {};

// The first attempt records its pid and runs until stopped; the second records whether the first
// still ran when it started, then ends.
std::int64_t submit_overlap_probe(Cluster& cluster) {
  const std::string shared = cluster.shared_dir();
  const std::string script = "if [ -e " + shared + "/first.pid ]; then "
                             "if [ -d /proc/$(cat " + shared + "/first.pid) ]; then touch " + shared + "/overlap; fi; "
                             "echo second attempt; exit 0; fi; "
                             "echo $$ > " + shared + "/first.tmp && mv " + shared + "/first.tmp " + shared +
                             "/first.pid; exec sleep 600";
  return cluster.submit({{"name", "probe"}, {"nodes", 1}, {"command", {{"argv", {"/bin/sh", "-c", script}}}}});
}

bool ended(pid_t pid) { return !fs::exists("/proc/" + std::to_string(pid)); }

TEST_P(PartitionTest, ANodeCutOffStopsItsAttemptBeforeTheDaemonStartsAnotherAndRejoinsWhenHealed) {
  Cluster& cluster = *cluster_;
  // 100 ms heartbeats, a 3 s node timeout, a 0.5 s kill grace and a 1 s fence: 1 + 0.5 + 0.3 <= 3.
  cluster.start_daemon({"--node-timeout-ms", "3000", "--kill-grace-ms", "500", "--fence-ms", "1000"});
  cluster.start_agent("node-a");
  cluster.wait_for_nodes(1);
  const std::int64_t id = submit_overlap_probe(cluster);
  const std::string pid_file = cluster.shared_dir() + "/first.pid";
  ASSERT_TRUE(eventually([&] { return fs::exists(pid_file); }, 30s)) << cluster.daemon_log();
  const auto pid = static_cast<pid_t>(std::stol(read_text(pid_file)));
  cluster.start_agent("node-b");  // where the retry runs
  cluster.wait_for_nodes(2);

  if (GetParam() == Loss::link_cut) {
    network_->cut("node-a");
  } else {
    network_->drop("node-a", "daemon");
  }
  const auto cut_at = std::chrono::steady_clock::now();
  const bool stopped = eventually([&] { return ended(pid); }, 2900ms);
  const auto stopped_after = std::chrono::steady_clock::now() - cut_at;
  ASSERT_TRUE(stopped) << "the cut-off node's attempt outlived the node timeout:\n"
                       << read_text(cluster.dir() + "/agent-node-a.log");
  EXPECT_GE(stopped_after, 850ms) << "stopped by the fence, 1 s after the last acknowledged heartbeat, not sooner";

  cluster.wait_job_state(id, "SUCCEEDED", 30s);
  EXPECT_FALSE(fs::exists(cluster.shared_dir() + "/overlap")) << "the retry started while the first attempt ran";
  const Json attempts = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts").body["attempts"];
  ASSERT_EQ(attempts.size(), 2u) << attempts.dump(2);
  EXPECT_EQ(attempts[0]["nodes"][0], "node-a");
  EXPECT_EQ(attempts[1]["nodes"][0], "node-b");
  EXPECT_TRUE(attempts[0]["infrastructure"].get<bool>()) << attempts.dump(2);

  if (GetParam() == Loss::link_cut) {
    network_->heal("node-a");
  } else {
    network_->undrop("node-a", "daemon");
  }
  // Healed, the node comes back by itself, with nothing of the old attempt left to kill.
  const bool rejoined = eventually(
      [&] {
        const ApiResult node = cluster.api("GET", "/v1/nodes/node-a");
        return node.status == 200 && node.body["connected"] == true;
      },
      30s);
  EXPECT_TRUE(rejoined) << cluster.api("GET", "/v1/nodes/node-a").body.dump(2) << attempts_text(cluster, id);
}

// A gang's node cut off: the other rank's all-reduce times out and it is stopped, but the cut node
// cannot say it stopped too. The attempt ends without it once it has gone unheard, so the node that
// was heard is free long before the node timeout; the retry still waits until the cut node's fence
// has surely stopped its rank (daemon/unheard_stops.h).
TEST_P(PartitionTest, AGangEndsWithoutItsCutOffNodeButItsRetryWaitsOutThatNodesFence) {
  Cluster& cluster = *cluster_;
  // 100 ms heartbeats, a 10 s node timeout, a 0.5 s kill grace and a 6 s fence: 6 + 0.5 + 1 <= 10;
  // the agents' all-reduce gives up after 5 s.
  cluster.start_daemon({"--node-timeout-ms", "10000", "--kill-grace-ms", "500", "--fence-ms", "6000"});
  cluster.start_agent("node-a");
  cluster.start_agent("node-b");
  cluster.wait_for_nodes(2);
  const std::int64_t id = cluster.submit(
      {{"name", "gang"}, {"nodes", 2}, {"kind", "simulated"}, {"workload", {{"steps", 300}, {"step_ms", 50}}}});
  const auto first_attempt = [&] {
    return cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts").body["attempts"][0];
  };
  ASSERT_TRUE(eventually([&] { return first_attempt().value("last_step", 0) >= 5; }, 30s))
      << attempts_text(cluster, id);
  cluster.start_agent("node-c");  // where the retry runs with node-b
  cluster.wait_for_nodes(3);

  const TimePoint cut_at = std::chrono::time_point_cast<Millis>(std::chrono::system_clock::now());
  if (GetParam() == Loss::link_cut) {
    network_->cut("node-a");
  } else {
    network_->drop("node-a", "daemon");
  }
  // node-a cannot be called DOWN before 10 s: by then the attempt has long ended.
  ASSERT_TRUE(eventually([&] { return first_attempt()["state"] == "FAILED"; }, 9s))
      << attempts_text(cluster, id) << cluster.daemon_log();
  const Json b = cluster.api("GET", "/v1/nodes/node-b").body;
  const Json a = cluster.api("GET", "/v1/nodes/node-a").body;
  EXPECT_NE(a["state"], "DOWN") << a.dump(2);
  EXPECT_TRUE(b["attempts"].empty()) << "the node that was heard is free: " << b.dump(2);
  EXPECT_EQ(b["free_cores"], b["cores"]) << b.dump(2);

  cluster.wait_job_state(id, "SUCCEEDED", 90s);
  const Json attempts = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/attempts").body["attempts"];
  ASSERT_EQ(attempts.size(), 2u) << attempts.dump(2);
  EXPECT_EQ(attempts[1]["nodes"], Json::array({"node-b", "node-c"})) << attempts.dump(2);
  // node-a was last heard at most a heartbeat before the cut; its fence has surely stopped its
  // rank 10 s after that.
  const TimePoint retried_at = *parse_time(attempts[1]["created_at"].get<std::string>());
  EXPECT_GE(retried_at - cut_at, Millis(9900)) << attempts.dump(2);
}

INSTANTIATE_TEST_SUITE_P(Losses, PartitionTest, ::testing::Values(Loss::link_cut, Loss::one_way),
                         [](const ::testing::TestParamInfo<Loss>& info) {
                           return info.param == Loss::link_cut ? std::string("LinkCut") : std::string("OneWay");
                         });

}  // namespace
}  // namespace trainyard::testing
