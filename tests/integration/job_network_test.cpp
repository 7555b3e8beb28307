// Each attempt in a network of its own (the daemon's --job-network, agent/job_network.h), on hosts
// built out of network namespaces: a job's ranks meet at MASTER_ADDR:MASTER_PORT across nodes,
// while another job can take the same port in its own network, cannot reach theirs, and neither
// can the nodes' own processes; nothing of it is left on the hosts afterwards.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <gtest/gtest.h>

#include "tests/integration/cluster.h"
#include "tests/integration/host_network.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

constexpr const char* kPool = "10.240.0.0/16";

// Rank 0 serves MASTER_PORT and records what rank 1 sends, then anything else that reaches it
// until `stop` appears; rank 1 connects (retrying while rank 0 starts) and sends.
constexpr const char* kRendezvous = R"(
import os, socket, sys, time
shared = sys.argv[1]
def put(name, text):
    with open(f"{shared}/{name}.tmp", "w") as f: f.write(text)
    os.chmod(f"{shared}/{name}.tmp", 0o644)  # jobs' files are private; the other job reads this one
    os.rename(f"{shared}/{name}.tmp", f"{shared}/{name}")
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
if os.environ["RANK"] == "0":
    server = socket.socket()
    server.bind(("0.0.0.0", port))
    server.listen(16)
    put("a-master", f"{addr} {port} {os.environ['TRAINYARD_JOB_ADDR']}")
    conn, _ = server.accept()
    put("a-received", conn.recv(100).decode())
    conn.close()
    server.settimeout(0.2)
    while not os.path.exists(f"{shared}/stop"):
        try:
            conn, peer = server.accept()
            put("a-intruder", str(peer))
        except socket.timeout:
            pass
else:
    deadline = time.time() + 60
    while True:
        try:
            conn = socket.create_connection((addr, port), timeout=2)
            break
        except OSError:
            if time.time() > deadline: raise
            time.sleep(0.1)
    conn.sendall(b"A_GRADIENTS_rank1")
    conn.close()
)";

// Binds job A's port in its own network, then tries A's rendezvous; prints what happened.
constexpr const char* kIntruder = R"(
import socket, sys
addr, port, _ = open(sys.argv[1] + "/a-master").read().split()
result = []
try:
    own = socket.socket()
    own.bind(("0.0.0.0", int(port)))
    own.listen(1)
    result.append("bound")
except OSError as e:
    result.append("bind failed: " + str(e))
try:
    socket.create_connection((addr, int(port)), timeout=3).sendall(b"B_WAS_HERE")
    result.append("connected")
except OSError as e:
    result.append("not connected: " + str(e))
print(", ".join(result))
)";

class JobNetworkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const auto why = HostNetwork::unavailable()) GTEST_SKIP() << *why;
    network_.emplace();
    for (const char* host : {"client", "daemon", "node-a", "node-b"}) network_->add_host(host);
    cluster_.emplace(*network_);
  }
  void TearDown() override {
    cluster_.reset();  // its processes live on the hosts: they go first
    network_.reset();
  }
  // What kIntruder prints when run by root on `host`, outside any job.
  std::string intrude_from_host(const std::string& host) {
    const std::string log = cluster_->dir() + "/intruder-" + host + ".log";
    Process probe({"/usr/bin/python3", "-c", kIntruder, cluster_->shared_dir()}, log, network_->netns_path(host));
    EXPECT_TRUE(probe.wait_exit(20s).has_value()) << "the probe on " << host << " did not end";
    return trimmed(read_text(log));
  }

  std::optional<HostNetwork> network_;
  std::optional<Cluster> cluster_;
};

TEST_F(JobNetworkTest, AnAttemptsRanksReachEachOtherAndNothingElseReachesThem) {
  Cluster& cluster = *cluster_;
  cluster.start_daemon({"--job-network", kPool});
  cluster.start_agent("node-a");
  cluster.start_agent("node-b");
  cluster.wait_for_nodes(2);
  const Json nodes = cluster.api("GET", "/v1/nodes").body["nodes"];
  ASSERT_EQ(nodes.size(), 2u) << nodes.dump(2);
  for (const auto& node : nodes) ASSERT_EQ(node.value("job_network", ""), "netns") << node.dump();

  const std::string shared = cluster.shared_dir();
  Json rendezvous = argv_job("rendezvous", {"/usr/bin/python3", "-c", kRendezvous, shared}, 2);
  rendezvous["cores_per_node"] = 1;  // room beside it on both nodes
  const std::int64_t a = cluster.submit(rendezvous);
  ASSERT_TRUE(eventually([&] { return fs::exists(shared + "/a-received"); }, 60s))
      << cluster.api("GET", job_path(a) + "/logs").body.dump(2) << "\n" << cluster.daemon_log() << "\n"
      << read_text(cluster.dir() + "/agent-node-a.log") << "\n" << read_text(cluster.dir() + "/agent-node-b.log");
  EXPECT_EQ(read_text(shared + "/a-received"), "A_GRADIENTS_rank1");
  std::istringstream master(read_text(shared + "/a-master"));
  std::string master_addr, master_port, job_addr;
  master >> master_addr >> master_port >> job_addr;
  EXPECT_EQ(master_addr.rfind("10.240.", 0), 0u) << "MASTER_ADDR is rank 0's address in the pool, not its node's";
  EXPECT_EQ(master_addr, job_addr);

  // Another job, on either node: A's port is free in its own network, and A cannot be reached.
  Json intruder = argv_job("intruder", {"/bin/sh", "-c",
      std::string("/usr/bin/python3 -c '") + kIntruder + "' " + shared + " > " + shared + "/b-result"});
  intruder["cores_per_node"] = 1;
  const std::int64_t b = cluster.submit(intruder);
  cluster.wait_job_state(b, "SUCCEEDED", 60s);
  if (HasFailure()) ADD_FAILURE() << cluster.api("GET", job_path(b) + "/logs").body.dump(2);
  const std::string from_job = trimmed(read_text(shared + "/b-result"));
  EXPECT_EQ(from_job.rfind("bound, not connected", 0), 0u) << from_job;
  // Nor can the nodes' own processes (root, on the host's network), where the attempt's routes are.
  for (const char* host : {"node-a", "node-b"}) {
    const std::string from_host = intrude_from_host(host);
    EXPECT_NE(from_host.find("not connected"), std::string::npos) << host << ": " << from_host;
  }

  std::ofstream(shared + "/stop").put('\n');
  cluster.wait_job_state(a, "SUCCEEDED", 60s);
  EXPECT_FALSE(fs::exists(shared + "/a-intruder")) << read_text(shared + "/a-intruder");
  const Json provenance = cluster.api("GET", "/v1/jobs/" + std::to_string(a) + "/attempts/1/provenance").body;
  EXPECT_EQ(provenance["network"]["addresses"][0], master_addr) << provenance.dump(2);

  // Each agent removed its attempts' links, routes and rules; only the pool's prohibit rule stays.
  for (const char* host : {"node-a", "node-b"}) {
    EXPECT_TRUE(eventually([&] { return network_->ip_on(host, {"link", "show"}).find("tyj") == std::string::npos; }, 10s))
        << network_->ip_on(host, {"link", "show"});
    const std::string rules = network_->ip_on(host, {"rule", "show"});
    std::istringstream lines(rules);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_EQ(line.find("10.240.0.0/30"), std::string::npos) << "an attempt's rule stayed: " << rules;
    }
    EXPECT_NE(rules.find(std::string("to ") + kPool + " prohibit"), std::string::npos) << rules;
    EXPECT_EQ(network_->ip_on(host, {"route", "show"}).find("10.240."), std::string::npos)
        << network_->ip_on(host, {"route", "show"});
  }
}

TEST_F(JobNetworkTest, WithoutTheFlagJobsShareTheirNodesNetwork) {
  Cluster& cluster = *cluster_;
  cluster.start_daemon();
  cluster.start_agent("node-a");
  cluster.wait_for_nodes(1);
  const std::string shared = cluster.shared_dir();
  const std::int64_t id = cluster.submit(shell_job("where", "echo $MASTER_ADDR ${TRAINYARD_JOB_ADDR:-none} > " + shared + "/where"));
  cluster.wait_job_state(id, "SUCCEEDED", 60s);
  EXPECT_EQ(trimmed(read_text(shared + "/where")), network_->address("node-a") + " none");
}

}  // namespace
}  // namespace trainyard::testing
