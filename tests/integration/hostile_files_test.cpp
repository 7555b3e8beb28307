// Hostile jobs and the files a node keeps (issue 56): a new database beside an old one's attempt
// directories and checkpoints, and a job's checkpoint directory filling the filesystem of the
// daemon's data directory.
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace trainyard::testing
