// An attempt's private /tmp and /dev/shm (agent/private_tmp.h): a mount namespace with two tmpfs of
// its own, which the attempt's processes join (agent/process_spawn.cpp), shared by them and by no
// other; without it, what the attempt's group left in the host's directories is removed. Mounting,
// joining and changing a file's group need root; the jobs' view is tests/integration/hostile_files_test.cpp.
#include "agent/private_tmp.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <thread>

#include "tests/support/temp_dir.h"

namespace trainyard::agent {
namespace {

namespace fs = std::filesystem;

// Runs `body` on a thread that joined the namespace `fd` as an attempt's process does; false when
// it could not join.
bool run_joined(int fd, const std::function<void()>& body) {
  bool joined = false;
  std::thread([&] {
    // A thread shares its filesystem view with the process's others until it takes its own.
    joined = ::unshare(CLONE_FS) == 0 && ::setns(fd, CLONE_NEWNS) == 0;
    if (joined) body();
  }).join();
  return joined;
}

bool is_empty_tmpfs(const char* path) {
  struct statfs st {};
  return ::statfs(path, &st) == 0 && st.f_type == TMPFS_MAGIC && fs::is_empty(path);
}

TEST(PrivateTmp, ItsProcessesShareAFreshTmpAndDevShmThatNeitherTheHostNorTheNextAttemptSees) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting needs root";
  const std::string name = "trainyard-private-tmp-test-" + std::to_string(::getpid());
  const fs::path host_shm_file = fs::path("/dev/shm") / name;
  std::ofstream(host_shm_file) << "planted";
  {
    const PrivateTmp first(8);
    EXPECT_NE(::fcntl(first.mount_namespace(), F_GETFD) & FD_CLOEXEC, 0) << "no job may hold the namespace";
    ASSERT_TRUE(run_joined(first.mount_namespace(), [&] {
      EXPECT_TRUE(is_empty_tmpfs("/tmp")) << "the host's /tmp, or a plant in it";
      EXPECT_TRUE(is_empty_tmpfs("/dev/shm")) << "the host's /dev/shm, or a plant in it";
      struct statfs st {};
      ASSERT_EQ(::statfs("/dev/shm", &st), 0);
      EXPECT_EQ(static_cast<std::uint64_t>(st.f_blocks) * static_cast<std::uint64_t>(st.f_bsize), std::uint64_t{8} << 20) << "bounded by the attempt's memory";
      std::ofstream(fs::path("/dev/shm") / name) << "tensor";
    }));
    ASSERT_TRUE(run_joined(first.mount_namespace(), [&] {
      std::string text;
      std::ifstream(fs::path("/dev/shm") / name) >> text;
      EXPECT_EQ(text, "tensor") << "the attempt's local processes share its /dev/shm";
    }));
    std::string host_text;
    std::ifstream(host_shm_file) >> host_text;
    EXPECT_EQ(host_text, "planted") << "the attempt wrote to the host's /dev/shm";
  }
  fs::remove(host_shm_file);
  const PrivateTmp next(0);
  ASSERT_TRUE(run_joined(next.mount_namespace(), [&] {
    EXPECT_TRUE(is_empty_tmpfs("/dev/shm")) << "the next attempt sees the last one's files";
  }));
}

// Whether a process of account `uid`, in the namespace `fd` when it is not -1, sees pid 1 (root's)
// in /proc while it sees itself; a forked child, since changing uid changes every thread's.
bool sees_root_process_as(uid_t uid, int fd) {
  const pid_t child = ::fork();
  if (child == 0) {
    if (fd >= 0 && ::setns(fd, CLONE_NEWNS) != 0) ::_exit(3);
    if (::setresgid(uid, uid, uid) != 0 || ::setresuid(uid, uid, uid) != 0) ::_exit(3);
    if (::access("/proc/self/status", R_OK) != 0) ::_exit(2);
    ::_exit(::access("/proc/1", F_OK) == 0 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) < 2) << "the child could not join, drop or see itself: " << status;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(PrivateTmp, ItsProcfsShowsAJobsAccountOnlyItsOwnProcessesAndTheHostsProcIsUntouched) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting needs root";
  constexpr uid_t kJobUid = 61235;
  const PrivateTmp attempt(0);
  if (!attempt.proc_error().empty()) GTEST_SKIP() << attempt.proc_error();
  EXPECT_FALSE(sees_root_process_as(kJobUid, attempt.mount_namespace())) << "another account's process is visible";
  EXPECT_TRUE(sees_root_process_as(kJobUid, -1)) << "the host's /proc changed";
}

TEST(PathInPrivateDirs, FindsWhatThePrivatePairWouldHideAlsoThroughALink) {
  EXPECT_EQ(path_in_private_dirs({"/var/lib/trainyard/attempts/c-1", "/tmp/work", "/dev/shm/x"}), "/tmp/work");
  EXPECT_EQ(path_in_private_dirs({"/dev/shm"}), "/dev/shm");
  EXPECT_EQ(path_in_private_dirs({"/tmp/../var/x", "/tmpfs/x", "/var/tmp/x", "/dev/shmx"}), "");
  EXPECT_EQ(path_in_private_dirs({}), "");
  const TempDir dir;  // in /tmp unless TMPDIR says otherwise
  if (path_in_private_dirs({dir.path().string()}).empty()) GTEST_SKIP() << "TMPDIR is outside /tmp";
  const fs::path outside = "/var/tmp/trainyard-private-tmp-link-" + std::to_string(::getpid());
  fs::create_directory_symlink(dir.path(), outside);
  EXPECT_EQ(path_in_private_dirs({(outside / "attempts").string()}), (outside / "attempts").string());
  fs::remove(outside);
}

TEST(RemoveFilesOfGroup, RemovesWhatTheGroupLeftWithAllBelowItAndNothingOfOthers) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file another group needs root";
  constexpr gid_t kAttemptGid = 61234;
  const TempDir dir;
  const fs::path left = dir.path() / "left";
  fs::create_directories(left / "below");
  std::ofstream(left / "below" / "file") << "x";
  std::ofstream(dir.path() / "left.txt") << "x";
  std::ofstream(dir.path() / "other.txt") << "x";
  for (const fs::path& path : {left, dir.path() / "left.txt"}) ASSERT_EQ(::lchown(path.c_str(), 0, kAttemptGid), 0);
  remove_files_of_group(kAttemptGid, {dir.path().string(), (dir.path() / "missing").string()});
  EXPECT_FALSE(fs::exists(left));
  EXPECT_FALSE(fs::exists(dir.path() / "left.txt"));
  EXPECT_TRUE(fs::exists(dir.path() / "other.txt"));
}

}  // namespace
}  // namespace trainyard::agent
