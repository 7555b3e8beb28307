// Hostile jobs and the files a node keeps: a new database beside an old one's attempt
// directories and checkpoints, files left and planted in /tmp and /dev/shm, and a job's checkpoint
// directory filling the filesystem of the daemon's data directory; and what /proc shows a job.
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <vector>

#include "tests/integration/cluster.h"

namespace trainyard::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// A tmpfs of `size_mb` at `path` for the test's life, detached however the test ends.
class SmallFilesystem {
 public:
  SmallFilesystem(const std::string& path, int size_mb) : path_(path) {
    fs::create_directories(path_);
    const std::string options = "size=" + std::to_string(size_mb) + "m,mode=0755";
    mounted_ = ::mount("tmpfs", path_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) == 0;
  }
  ~SmallFilesystem() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  SmallFilesystem(const SmallFilesystem&) = delete;
  SmallFilesystem& operator=(const SmallFilesystem&) = delete;
  bool mounted() const { return mounted_; }
  std::int64_t free_mb() const {
    struct statvfs st {};
    if (::statvfs(path_.c_str(), &st) != 0) return -1;
    return static_cast<std::int64_t>(st.f_bavail * st.f_frsize / (1024 * 1024));
  }

 private:
  std::string path_;
  bool mounted_ = false;
};

// The daemon's data directory, and with it the default checkpoint root, on a 64 MiB filesystem; a
// job writes 400 MiB into its checkpoint directory. Before, it filled the filesystem, the daemon
// answered every submit 503, and the job's ENOSPC was retried as the node's full disk. The agent's
// floor stops it first, as its own disk_full, and the daemon keeps working.
TEST(HostileFiles, AJobFillingTheDaemonsFilesystemThroughItsCheckpointDirectoryIsStoppedFirst) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting the small filesystem needs root";
  Cluster cluster;
  const SmallFilesystem data(cluster.dir() + "/data", 64);
  ASSERT_TRUE(data.mounted());
  cluster.start_daemon();
  cluster.start_agent("trn-0", {.extra_flags = {"--job-disk-floor-mb", "40"}});
  cluster.wait_for_nodes(1);
  // 1 MiB every 100 ms: the floor is crossed about 2 s in, the filesystem would be full about 6 s in.
  Json spec = shell_job("filler",
                        "i=0; while [ $i -lt 400 ]; do head -c 1048576 /dev/zero > \"$TRAINYARD_CHECKPOINT_DIR/blob-$i\" "
                        "|| exit 1; i=$((i+1)); sleep 0.1; done");
  spec["retry"] = {{"attempts", 1}};
  const auto id = cluster.submit(spec);
  const Json job = cluster.wait_job_state(id, "FAILED", 60s);
  EXPECT_EQ(job["failure_class"], "disk_full") << job.dump();
  const Json attempts = attempts_of(cluster, id);
  ASSERT_EQ(attempts.size(), 1u) << attempts.dump();
  EXPECT_FALSE(attempts[0].value("infrastructure", false)) << attempts.dump();
  EXPECT_EQ(attempts[0]["reason"].get<std::string>().rfind("job disk floor: the node's checkpoint filesystem", 0), 0u)
      << attempts.dump();
  EXPECT_GT(data.free_mb(), 20) << "the job was stopped before the filesystem filled";
  // The daemon still writes: a new job is accepted.
  EXPECT_GT(cluster.submit(shell_job("after", "true")), id);
}

std::string log_of(Cluster& cluster, std::int64_t id, const std::string& token) {
  const auto logs = cluster.api("GET", "/v1/jobs/" + std::to_string(id) + "/logs", "", token);
  return logs.status == 200 && !logs.body["logs"].empty() ? logs.body["logs"][0]["text"].get<std::string>() : "";
}

// Job and attempt ids start again at 1 with a new database, which the README supports beside the
// old files. Before, user B's first job ran as old job 1's uid in old attempts/1: it read user A's
// environment file and checkpoint, and its log began with A's output.
TEST(HostileFiles, ANewDatabaseBesideOldFilesGivesItsJobsNeitherTheOldUidsNorTheOldDirectories) {
  if (::geteuid() != 0) GTEST_SKIP() << "jobs run as accounts of their own only under a root agent";
  Cluster cluster;
  cluster.start_daemon();
  cluster.start_agent("trn-0");
  cluster.wait_for_nodes(1);
  const std::string alice = cluster.api("POST", "/v1/tokens", R"({"user":"alice"})").body["token"];
  const auto old_job = cluster.submit(
      shell_job("alice-job", "echo A_SECRET > env-file; echo A_SECRET > \"$TRAINYARD_CHECKPOINT_DIR/secret\"; "
                             "echo A_OUTPUT; id -u"),
      alice);
  cluster.wait_job_state(old_job, "SUCCEEDED", 30s);
  const std::string old_log = log_of(cluster, old_job, alice);
  ASSERT_NE(old_log.find("A_OUTPUT"), std::string::npos) << old_log;
  const std::string old_dir = cluster.attempt_dir("trn-0", 1);

  // A new database in the same data directory; the node joins it afresh (the old one knew its credential).
  cluster.kill_daemon(SIGTERM);
  cluster.stop_agent("trn-0", SIGTERM);
  fs::remove(cluster.dir() + "/agents/trn-0/node.credential");
  cluster.start_daemon({"--store", "sqlite://" + cluster.dir() + "/data/second.db"});
  cluster.start_agent("trn-0");
  cluster.wait_for_nodes(1);
  const std::string bob = cluster.api("POST", "/v1/tokens", R"({"user":"bob"})").body["token"];
  const auto new_job = cluster.submit(
      shell_job("bob-job", "cat env-file \"$TRAINYARD_CHECKPOINT_DIR/secret\" 2>/dev/null; echo B_OUTPUT; id -u"), bob);
  ASSERT_EQ(new_job, old_job) << "the new database numbers its jobs from 1 again";
  const Json job = cluster.wait_job_state(new_job, "SUCCEEDED", 30s);
  const std::string new_log = log_of(cluster, new_job, bob);
  EXPECT_EQ(new_log.find("A_SECRET"), std::string::npos) << "read the old job's files:\n" << new_log;
  EXPECT_EQ(new_log.find("A_OUTPUT"), std::string::npos) << "appended to the old job's log:\n" << new_log;
  EXPECT_NE(new_log.find("B_OUTPUT"), std::string::npos) << new_log;
  const auto last_line = [](const std::string& log) {
    const std::string text = trimmed(log);
    return text.substr(text.rfind('\n') + 1);
  };
  EXPECT_NE(last_line(new_log), last_line(old_log)) << "job 1 of each database runs as a uid of its own";
  EXPECT_EQ(trimmed(read_text(old_dir + "/rank-0.log")), trimmed(old_log)) << "the old attempt's log is left as it was";
  EXPECT_EQ(job.value("failure_class", ""), "");
}

// A path removed, with all below it, however the test ends.
class RemovedAtExit {
 public:
  explicit RemovedAtExit(std::string path) : path_(std::move(path)) {}
  ~RemovedAtExit() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  RemovedAtExit(const RemovedAtExit&) = delete;
  RemovedAtExit& operator=(const RemovedAtExit&) = delete;

 private:
  std::string path_;
};

// A file the test plants on the host, gone with it.
class HostFile {
 public:
  HostFile(const std::string& path, const std::string& text) : removed_(path) { std::ofstream(path) << text; }

 private:
  RemovedAtExit removed_;
};

// The processes that are in, or hold an fd of, the namespace `ns` (as /proc/PID/ns/mnt reads:
// "mnt:[INODE]"): while there is one, the namespace, and the tmpfs mounted only in it, live on.
std::vector<std::string> holders_of(const std::string& ns) {
  std::vector<std::string> holders;
  std::error_code ec;
  for (const auto& process : fs::directory_iterator("/proc", ec)) {
    const std::string pid = process.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code link_ec;
    if (fs::read_symlink(process.path() / "ns" / "mnt", link_ec).string() == ns) holders.push_back(pid);
    std::error_code fd_ec;
    for (const auto& fd : fs::directory_iterator(process.path() / "fd", fd_ec)) {
      if (fs::read_symlink(fd.path(), link_ec).string() == ns) holders.push_back(pid + " (fd)");
    }
  }
  return holders;
}

// Before, /tmp and /dev/shm were the host's: what a job left there outlived it (a 64 MB /dev/shm
// file kept its RAM after its cgroup was gone) and could be planted for the next job. Each attempt
// now has its own, shared by its processes on the node (PyTorch passes tensors between local ranks
// through /dev/shm), and they go with it.
TEST(HostileFiles, TmpAndDevShmAreTheAttemptsOwnSharedByItsLocalProcessesAndGoneAfterIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "a private /tmp needs a root agent";
  // Outside /tmp: an attempt whose directory is in /tmp keeps the host's (the next test).
  Cluster cluster("/var/tmp");
  cluster.start_daemon();
  cluster.start_agent("trn-0");
  cluster.wait_for_nodes(1);
  const std::string plant = "trainyard-plant-" + std::to_string(::getpid());
  const HostFile tmp_plant("/tmp/" + plant, "planted");
  const HostFile shm_plant("/dev/shm/" + plant, "planted");
  const HostFile host_file("/tmp/" + plant + "-host", "HOST_FILE");
  const std::string alice = cluster.api("POST", "/v1/tokens", R"({"user":"alice"})").body["token"];
  // Local process 0 plants in both; local process 1 must see the /dev/shm one.
  Json spec = shell_job("planter", "if [ \"$LOCAL_RANK\" = 0 ]; then echo A_PLANT > /tmp/" + plant + "-a; echo A_PLANT > /dev/shm/" +
                                       plant + "-a; cat /tmp/" + plant + " /tmp/" + plant + "-host 2>/dev/null; "
                                       "echo MNT_NS=$(readlink /proc/self/ns/mnt); "
                                       "else i=0; while [ ! -e /dev/shm/" + plant + "-a ] && [ $i -lt 300 ]; do sleep 0.05; "
                                       "i=$((i+1)); done; cat /dev/shm/" + plant + "-a; fi");
  spec["command"]["procs_per_node"] = 2;
  const auto planter = cluster.submit(spec, alice);
  cluster.wait_job_state(planter, "SUCCEEDED", 30s);
  const std::string planter_log = log_of(cluster, planter, alice);
  EXPECT_NE(planter_log.find("A_PLANT"), std::string::npos) << "its local processes share /dev/shm:\n" << planter_log;
  EXPECT_EQ(planter_log.find("HOST_FILE"), std::string::npos) << "it saw the host's /tmp:\n" << planter_log;
  EXPECT_EQ(planter_log.find("planted"), std::string::npos) << "it saw a file planted in the host's /tmp:\n" << planter_log;
  EXPECT_FALSE(fs::exists("/tmp/" + plant + "-a")) << "its /tmp file outlived it on the host";
  EXPECT_FALSE(fs::exists("/dev/shm/" + plant + "-a")) << "its /dev/shm file outlived it on the host";
  // Its namespace, and with it its /tmp and /dev/shm and what they held, went with its processes.
  const auto ns_at = planter_log.find("MNT_NS=");
  ASSERT_NE(ns_at, std::string::npos) << planter_log;
  const std::string ns = planter_log.substr(ns_at + 7, planter_log.find('\n', ns_at) - ns_at - 7);
  EXPECT_NE(ns, fs::read_symlink("/proc/self/ns/mnt").string()) << "it ran in the host's mount namespace";
  EXPECT_EQ(holders_of(ns), std::vector<std::string>{}) << "its private /tmp and /dev/shm outlived it";

  const std::string bob = cluster.api("POST", "/v1/tokens", R"({"user":"bob"})").body["token"];
  const auto reader = cluster.submit(
      shell_job("reader", "cat /tmp/" + plant + "-a /dev/shm/" + plant + "-a 2>/dev/null; ls -A /tmp /dev/shm"), bob);
  cluster.wait_job_state(reader, "SUCCEEDED", 30s);
  const std::string reader_log = log_of(cluster, reader, bob);
  EXPECT_EQ(reader_log.find("A_PLANT"), std::string::npos) << "the next job read the plant:\n" << reader_log;
  EXPECT_EQ(reader_log.find(plant), std::string::npos) << "the next job's /tmp was not empty:\n" << reader_log;
  EXPECT_EQ(trimmed(read_text(cluster.dir() + "/agent-trn-0.log")).find("event=private_tmp_unavailable"), std::string::npos);
}

// Whether any process of the host has `word` in its command line, as root sees it.
bool host_runs_a_command_with(const std::string& word) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::string cmdline = read_text(entry.path().string() + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(word) != std::string::npos) return true;
  }
  return false;
}

// Before, every job's account read every other job's command line (and the agent's) in /proc. An
// attempt's mount namespace has a /proc of its own in which its account sees only its processes.
TEST(HostileFiles, AJobsProcShowsItsOwnProcessesButNeverAnotherJobsCommandLine) {
  if (::geteuid() != 0) GTEST_SKIP() << "a private /proc needs a root agent";
  Cluster cluster("/var/tmp");
  cluster.start_daemon();
  cluster.start_agent("trn-0");
  cluster.wait_for_nodes(1);
  const std::string secret_arg = "61.0" + std::to_string(::getpid());
  const std::string alice = cluster.api("POST", "/v1/tokens", R"({"user":"alice"})").body["token"];
  const std::string bob = cluster.api("POST", "/v1/tokens", R"({"user":"bob"})").body["token"];
  Json holder = argv_job("holder", {"/bin/sleep", secret_arg});
  holder["cores_per_node"] = 1;
  const auto held = cluster.submit(holder, alice);
  cluster.wait_job_state(held, "RUNNING", 30s);
  ASSERT_TRUE(eventually([&] { return host_runs_a_command_with(secret_arg); }, 10s)) << "nothing to hide";

  Json looker = shell_job("looker", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo; echo SELF=$(cat /proc/self/cmdline | tr '\\0' ' ')");
  looker["cores_per_node"] = 1;
  const auto looked = cluster.submit(looker, bob);
  cluster.wait_job_state(looked, "SUCCEEDED", 30s);
  const std::string log = log_of(cluster, looked, bob);
  EXPECT_NE(log.find("SELF=cat /proc/self/cmdline"), std::string::npos) << "it could not see itself:\n" << log;
  EXPECT_EQ(log.find(secret_arg), std::string::npos) << "it read another job's command line:\n" << log;
  EXPECT_EQ(log.find("trainyard-agent"), std::string::npos) << "it read the agent's command line:\n" << log;
  EXPECT_EQ(read_text(cluster.dir() + "/agent-trn-0.log").find("event=private_proc_unavailable"), std::string::npos);
  ASSERT_EQ(cluster.api("POST", job_path(held) + "/cancel").status, 200);
  cluster.wait_job_state(held, "CANCELLED", 30s);
}

// An attempt whose directory is in /tmp (here the cluster's) would not reach it from a /tmp of its
// own: it runs with the host's, and what its account left there goes when it ends.
TEST(HostileFiles, AnAttemptThatNeedsTheHostsTmpKeepsItAndItsFilesThereGoWithIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "jobs run as accounts of their own only under a root agent";
  Cluster cluster;
  ASSERT_EQ(cluster.dir().rfind("/tmp/", 0), 0u);
  cluster.start_daemon();
  cluster.start_agent("trn-0");
  cluster.wait_for_nodes(1);
  const std::string left = "/dev/shm/trainyard-left-" + std::to_string(::getpid());
  const RemovedAtExit removed(left);
  const auto id = cluster.submit(shell_job("leaver", "mkdir " + left + " && echo LEFT > " + left + "/file"));
  cluster.wait_job_state(id, "SUCCEEDED", 30s);
  EXPECT_FALSE(fs::exists(left)) << "its /dev/shm files outlived it";
  EXPECT_NE(read_text(cluster.dir() + "/agent-trn-0.log").find("event=private_tmp_unavailable"), std::string::npos);
}

}  // namespace
}  // namespace trainyard::testing
