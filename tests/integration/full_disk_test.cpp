// The daemon's data directory on a small tmpfs filled to 100 % while jobs run, are cancelled,
// released and changed, a node is drained and an agent dies (issue 53): nothing is answered 2xx
// that was not stored, what the daemon did by itself waits and is stored once space returns, and
// a restart finds the state the daemon showed before it. GET /v1/cluster says what the dashboard's
// banner shows meanwhile.
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <vector>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// A tmpfs mounted on `dir` for as long as this lives. Detached lazily, so it goes even while the
// daemon still holds the database open (a test failing half-way kills the daemon only afterwards).
class TmpfsMount {
 public:
  TmpfsMount(const std::string& dir, const std::string& size) : dir_(dir) {
    fs::create_directories(dir);
    const std::string options = "size=" + size;
    if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, options.c_str()) != 0) error_ = std::strerror(errno);
  }
  ~TmpfsMount() {
    if (error_.empty()) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;

  // Empty once mounted.
  const std::string& error() const { return error_; }

 private:
  std::string dir_;
  std::string error_;
};

// Writes `path` until the filesystem refuses with ENOSPC; false (with the reason) on any other error.
::testing::AssertionResult fill_until_enospc(const std::string& path) {
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return ::testing::AssertionFailure() << "open " << path << ": " << std::strerror(errno);
  const std::vector<char> block(1 << 20, 'x');
  while (::write(fd, block.data(), block.size()) > 0) {
  }
  const int error = errno;
  ::close(fd);
  if (error != ENOSPC) return ::testing::AssertionFailure() << "write " << path << ": " << std::strerror(error);
  return ::testing::AssertionSuccess();
}

std::uint64_t free_bytes(const std::string& dir) {
  struct statvfs fs_info {};
  if (::statvfs(dir.c_str(), &fs_info) != 0) return 0;
  return static_cast<std::uint64_t>(fs_info.f_bavail) * fs_info.f_frsize;
}

bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0; }

// What a restart must find again: each job's state, hold, spec and attempts, each node's state.
Json remembered_state(Cluster& cluster, const std::vector<std::int64_t>& jobs) {
  Json state;
  for (const std::int64_t id : jobs) {
    const Json job = cluster.api("GET", job_path(id)).body;
    state["jobs"][std::to_string(id)] = {{"state", job["state"]},
                                         {"held_by", job.value("held_by", "")},
                                         {"spec", job["spec"]},
                                         {"attempts", attempts_of(cluster, id).size()}};
  }
  const Json nodes = cluster.api("GET", "/v1/nodes").body["nodes"];
  for (const Json& node : nodes) state["nodes"][node["name"].get<std::string>()] = node["state"];
  return state;
}

class FullDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs for the data directory needs root";
    data_mount_.emplace(data_dir(), "16m");
    ASSERT_EQ(data_mount_->error(), "") << "mount tmpfs on " << data_dir();
  }

  std::string data_dir() const { return cluster.dir() + "/data"; }

  Cluster cluster;

 private:
  // Declared after the cluster, so gone before it: detached also when SetUp or the test fails.
  std::optional<TmpfsMount> data_mount_;
};

TEST_F(FullDisk, NothingIsAnswered2xxUnlessStoredAndWhatWaitedIsStoredOnceSpaceReturns) {
  cluster.start_daemon();
  cluster.start_agent("fd-1");
  cluster.start_agent("fd-2");
  cluster.wait_for_nodes(2);

  const std::string pid_file = cluster.shared_dir() + "/cancelled.pid";
  const auto cancelled = cluster.submit(shell_job("cancelled", "echo $$ > " + pid_file + "; exec sleep 600"));
  cluster.wait_job_state(cancelled, "RUNNING", 20s);
  const std::string cancelled_node = attempts_of(cluster, cancelled)[0]["nodes"][0];
  const std::string lost_node = cancelled_node == "fd-1" ? "fd-2" : "fd-1";
  const auto lost = cluster.submit(argv_job("lost", {"/bin/sleep", "600"}));  // whole nodes: the other one
  cluster.wait_job_state(lost, "RUNNING", 20s);
  ASSERT_EQ(attempts_of(cluster, lost)[0]["nodes"][0], lost_node);
  // Three nodes wanted of two: both stay pending whatever the outage does.
  Json waiting = argv_job("held", {"/bin/true"}, 3);
  waiting["wait_for_capacity"] = true;
  waiting["hold"] = true;
  const auto held = cluster.submit(waiting);
  waiting["name"] = "pending";
  waiting.erase("hold");
  const auto pending = cluster.submit(waiting);
  ASSERT_TRUE(eventually([&] { return fs::exists(pid_file) && !trimmed(read_text(pid_file)).empty(); }, 10s));
  const pid_t cancelled_pid = std::stoi(trimmed(read_text(pid_file)));
  const Json pending_spec = cluster.api("GET", job_path(pending)).body["spec"];

  const std::string filler = data_dir() + "/filler";
  ASSERT_TRUE(fill_until_enospc(filler));
  ASSERT_EQ(free_bytes(data_dir()), 0u);

  int refused = 0, answered = 0;
  // A change asked for while the disk is full: refused, never claimed.
  const auto change_refused = [&](const std::string& method, const std::string& target, const std::string& body = "") {
    const ApiResult r = cluster.api(method, target, body);
    EXPECT_EQ(r.status, 503) << method << " " << target << " answered while the disk is full: " << r.body.dump();
    if (r.status == 503) {
      ++refused;
      EXPECT_EQ(r.body["error"]["code"], "unavailable") << r.body.dump();
    }
  };
  const auto read_answered = [&](const std::string& target) {
    const ApiResult r = cluster.api("GET", target);
    EXPECT_EQ(r.status, 200) << "GET " << target << " while the disk is full: " << r.body.dump();
    answered += r.status == 200;
    return r.body;
  };

  change_refused("POST", job_path(cancelled) + "/cancel");
  const Json cancelled_after = read_answered(job_path(cancelled));
  EXPECT_EQ(cancelled_after["state"], "RUNNING") << cancelled_after.dump();
  EXPECT_NE(cancelled_after.value("cancel_requested", false), true) << cancelled_after.dump();
  change_refused("POST", job_path(held) + "/release");
  EXPECT_EQ(read_answered(job_path(held))["held_by"], "owner");
  change_refused("PATCH", job_path(pending), R"({"priority": 7})");
  EXPECT_EQ(read_answered(job_path(pending))["spec"], pending_spec);
  change_refused("POST", "/v1/nodes/" + cancelled_node + "/drain", R"({"reason":"full-disk test"})");
  EXPECT_EQ(read_answered("/v1/nodes/" + cancelled_node)["state"], "HEALTHY");
  const ApiResult health = cluster.api("GET", "/healthz");
  EXPECT_EQ(health.status, 503) << health.body.dump();
  EXPECT_EQ(health.body["status"], "degraded") << health.body.dump();
  EXPECT_NE(health.body.value("store", "").find("store writes failing since"), std::string::npos) << health.body.dump();
  const Json condition = read_answered("/v1/cluster");  // what the dashboard's banner shows
  EXPECT_NE(condition.value("/store_problem/error"_json_pointer, "").find("full"), std::string::npos)
      << condition.dump();

  // The daemon's own changes now: the node goes DOWN and its job ends, neither storable yet.
  cluster.stop_agent(lost_node, SIGKILL);
  ASSERT_TRUE(eventually(
      [&] { return cluster.daemon_log().find("event=node_down node=" + lost_node) != std::string::npos; }, 10s))
      << cluster.daemon_log();
  ASSERT_TRUE(
      eventually([&] { return cluster.daemon_log().find("event=change_waits_for_store") != std::string::npos; }, 10s));
  change_refused("POST", job_path(cancelled) + "/cancel");
  EXPECT_TRUE(process_exists(cancelled_pid)) << "the job of a refused cancel was killed";
  read_answered("/v1/nodes");

  // A retry may already have fitted in file space a failed commit had taken (SQLite rewrites the
  // same WAL frames): then nothing waited for the space's return, and there is nothing to time.
  const bool failing_until_space_returned = cluster.api("GET", "/healthz").status == 503;
  fs::remove(filler);
  const auto space_returned = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually([&] { return cluster.api("GET", "/healthz").status == 200; }, 20s)) << cluster.daemon_log();
  const std::chrono::duration<double> to_first_store = std::chrono::steady_clock::now() - space_returned;
  std::cout << "full-disk: refused " << refused << " requests, answered " << answered << ", ";
  if (failing_until_space_returned) {
    std::cout << "first stored change " << std::fixed << std::setprecision(1) << to_first_store.count()
              << " s after space returned\n";
  } else {
    std::cout << "writes succeeded again before space returned\n";
  }

  ASSERT_TRUE(
      eventually([&] { return !cluster.api("GET", "/v1/events?type=store.recovered").body["events"].empty(); }, 20s));
  EXPECT_EQ(cluster.api("GET", "/v1/cluster").body, Json::object()) << "the banner stays after the store recovered";
  ASSERT_TRUE(eventually([&] { return cluster.api("GET", "/v1/nodes/" + lost_node).body["state"] == "DOWN"; }, 20s));

  const ApiResult cancel = cluster.api("POST", job_path(cancelled) + "/cancel");
  EXPECT_EQ(cancel.status, 200) << cancel.body.dump();
  cluster.wait_job_state(cancelled, "CANCELLED", 20s);
  EXPECT_TRUE(eventually([&] { return !process_exists(cancelled_pid); }, 10s))
      << "the cancelled job's process lives on";
  EXPECT_EQ(cluster.api("POST", job_path(held) + "/release").status, 200);
  EXPECT_EQ(cluster.api("PATCH", job_path(pending), R"({"priority": 7})").status, 200);
  EXPECT_EQ(cluster.api("GET", job_path(pending)).body["spec"]["priority"], 7);
  cluster.wait_job_state(lost, "RUNNING", 20s);  // its retry, on the node the cancel freed
  const Json lost_attempts = attempts_of(cluster, lost);
  ASSERT_EQ(lost_attempts.size(), 2u) << "retried once: " << lost_attempts.dump();
  EXPECT_EQ(lost_attempts[0]["failure_class"], "node_lost") << lost_attempts.dump();
  EXPECT_EQ(lost_attempts[1]["nodes"][0], cancelled_node) << lost_attempts.dump();
  EXPECT_EQ(cluster.api("POST", "/v1/nodes/" + cancelled_node + "/drain", R"({"reason":"full-disk test"})").status,
            200);

  const std::vector<std::int64_t> jobs = {cancelled, lost, held, pending};
  const Json before_restart = remembered_state(cluster, jobs);
  cluster.kill_daemon(SIGKILL);
  cluster.start_daemon();
  ASSERT_TRUE(
      eventually([&] { return cluster.api("GET", "/v1/nodes/" + cancelled_node).body["connected"] == true; }, 20s));
  EXPECT_EQ(remembered_state(cluster, jobs), before_restart);
  EXPECT_EQ(before_restart["nodes"][cancelled_node], "DRAINED") << before_restart.dump();
}

}  // namespace
}  // namespace trainyard::testing
