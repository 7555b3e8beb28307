// Hostile jobs and the files a node keeps (issue 56): a job's checkpoint directory filling the
// filesystem of the daemon's data directory.
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
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

}  // namespace
}  // namespace trainyard::testing
