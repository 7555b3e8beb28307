// A hostile job at the agents' data-plane ports (docs/DESIGN.md "Collectives and the data plane"):
// it reads the ports from /proc/net/tcp like any process of the node and holds hundreds of
// connections to each that never say hello, reopening each one the agent drops, while guessing
// pre-flight sessions' hellos under a secret it does not have. Another user's pre-flight must still
// pass, no node may be judged for it, and the agents' logs must not grow with the flood.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <gtest/gtest.h>
#include <openssl/rand.h>
#include <thread>

#include "neuron/data_plane.h"
#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;

// Far above any attempt id, as the daemon numbers health-check sessions (daemon/health_checks.cpp).
constexpr std::int64_t kHealthSessionBase = std::int64_t{1} << 62;

class DataPlaneFlood {
 public:
  DataPlaneFlood(std::vector<neuron::HostPort> ports, std::size_t held_per_port)
      : ports_(std::move(ports)), held_per_port_(held_per_port), thread_([this] { run(); }) {}
  ~DataPlaneFlood() { stop(); }
  DataPlaneFlood(const DataPlaneFlood&) = delete;
  DataPlaneFlood& operator=(const DataPlaneFlood&) = delete;

  void stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::uint64_t opened() const { return opened_; }
  std::uint64_t guesses() const { return guesses_; }

 private:
  void run() {
    std::vector<std::vector<neuron::Socket>> held(ports_.size());
    std::uint64_t guess = 0;
    while (!stopping_) {
      for (std::size_t p = 0; p < ports_.size(); ++p) {
        while (held[p].size() < held_per_port_) {
          auto socket = neuron::connect_tcp(ports_[p], std::chrono::steady_clock::now() + 1s);
          if (!socket) break;
          held[p].push_back(std::move(*socket));
          ++opened_;
        }
        if (auto stranger = guessed_hello(ports_[p], guess++)) held[p].push_back(std::move(*stranger));
      }
      std::vector<pollfd> fds;
      for (const auto& sockets : held) {
        for (const auto& socket : sockets) fds.push_back({socket.fd(), POLLIN, 0});
      }
      ::poll(fds.data(), fds.size(), 20);
      std::vector<int> closed;
      for (const pollfd& fd : fds) {
        if (fd.revents == 0) continue;
        char buffer[64];
        if (::recv(fd.fd, buffer, sizeof buffer, MSG_DONTWAIT) <= 0) closed.push_back(fd.fd);  // the nonce is dropped
      }
      for (auto& sockets : held) {
        std::erase_if(sockets, [&](const neuron::Socket& s) {
          return std::find(closed.begin(), closed.end(), s.fd()) != closed.end();
        });
      }
    }
  }

  // A well-formed hello for one of the first pre-flight sessions, with a MAC under a made-up secret.
  std::optional<neuron::Socket> guessed_hello(const neuron::HostPort& port, std::uint64_t n) {
    const std::int64_t check = 1 + static_cast<std::int64_t>(n % 6);
    const std::int64_t session = kHealthSessionBase + (check << 16) + static_cast<std::int64_t>((n / 6) % 3);
    const int from = static_cast<int>((n / 18) % 2);
    const neuron::DataPlaneHello hello{session, from, 1 - from, 1};
    std::array<unsigned char, 32> secret{};
    RAND_bytes(secret.data(), static_cast<int>(secret.size()));
    auto socket = neuron::connect_tcp(port, std::chrono::steady_clock::now() + 1s);
    if (!socket) return std::nullopt;
    const std::string guessed(reinterpret_cast<const char*>(secret.data()), secret.size());
    (void)neuron::send_hello(*socket, hello, guessed, std::chrono::steady_clock::now() + 200ms);
    ++guesses_;
    return socket;
  }

  std::vector<neuron::HostPort> ports_;
  std::size_t held_per_port_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> opened_{0};
  std::atomic<std::uint64_t> guesses_{0};
  std::thread thread_;
};

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

TEST(HostileDataPlane, AFloodAtTheDataPlanePortsNeitherFailsAPreflightNorMakesANodeUnhealthy) {
  Cluster cluster;
  cluster.start_daemon();
  cluster.start_agent("node-a");
  cluster.start_agent("node-b");
  cluster.wait_for_nodes(2);
  std::vector<neuron::HostPort> ports;
  const Json nodes = cluster.api("GET", "/v1/nodes").body["nodes"];
  for (const Json& node : nodes) {
    ports.push_back(neuron::parse_host_port(node["data_addr"].get<std::string>(), "data_addr"));
  }
  ASSERT_EQ(ports.size(), 2u);

  const auto flood_start = std::chrono::steady_clock::now();
  DataPlaneFlood flood(ports, 280);  // what the job held on each port
  ASSERT_TRUE(eventually([&] { return flood.opened() >= 2 * 280 + 100 && flood.guesses() >= 20; }, 30s))
      << "the flood never got going: " << flood.opened() << " connections opened";
  const std::int64_t id = cluster.submit(shell_job("flooded", "true", 2));
  const Json job = cluster.wait_job_state(id, "SUCCEEDED", 120s);
  const double flood_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - flood_start).count();
  const std::uint64_t opened = flood.opened();
  flood.stop();
  ::testing::Test::RecordProperty("flood_connections", std::to_string(opened));
  ::testing::Test::RecordProperty("flood_guessed_hellos", std::to_string(flood.guesses()));
  ::testing::Test::RecordProperty("flood_s", std::to_string(flood_s));

  const Json checks = cluster.api("GET", "/v1/healthchecks").body["checks"];
  bool preflight_passed = false;
  for (const Json& check : checks) {
    for (const Json& verdict : check["verdicts"]) EXPECT_NE(verdict["state"], "UNHEALTHY") << check.dump();
    if (check["kind"] == "preflight" && check["state"] == "PASSED") preflight_passed = true;
  }
  EXPECT_TRUE(preflight_passed) << checks.dump();
  const Json after = cluster.api("GET", "/v1/nodes").body["nodes"];
  ASSERT_EQ(after.size(), 2u);
  for (const Json& node : after) EXPECT_EQ(node["state"], "HEALTHY") << node.dump();

  // One line per rejection reason per 5 s interval (data_plane.h), whatever the flood's size.
  constexpr std::size_t kReasons = 8;
  const std::size_t bound = kReasons * (static_cast<std::size_t>(flood_s / 5) + 2);
  for (const std::string name : {"node-a", "node-b"}) {
    const std::string log = read_text(cluster.dir() + "/agent-" + name + ".log");
    const std::size_t lines = count_of(log, "data_plane event=rejected");
    EXPECT_LE(lines, bound) << name << ": " << lines << " lines for " << opened << " connections in " << flood_s
                            << " s";
    EXPECT_GE(lines, 1u) << name << " logged none of the flood";
    ::testing::Test::RecordProperty(name + "_rejection_lines", std::to_string(lines));
  }
}

}  // namespace
}  // namespace trainyard::testing
