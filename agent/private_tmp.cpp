#include "agent/private_tmp.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <spdlog/spdlog.h>
#include <stdexcept>
#include <thread>

namespace trainyard::agent {
namespace {

// Runs on a thread of its own, which alone enters the new namespace (unshare of a mount namespace
// takes only the calling thread's view, CLONE_FS): the agent's other threads keep the host's.
// Returns the namespace's fd, or -1 with `error` saying what failed; `proc_error` says why its
// /proc shows every process (the namespace is made all the same).
int make_namespace(const std::string& options, std::string& error, std::string& proc_error) {
  const auto failed = [&](const char* what) {
    error = std::string(what) + ": " + std::strerror(errno);
    return -1;
  };
  if (::unshare(CLONE_NEWNS) != 0) return failed("unshare(CLONE_NEWNS)");
  // Its mounts stay its own: none propagates back to the host's namespace.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) return failed("making / a slave");
  if (::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) return failed("mounting /tmp");
  if (::mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) return failed("mounting /dev/shm");
  // A procfs of its own (options per mount since Linux 5.8; older kernels refuse "invisible", and
  // would otherwise apply it to the host's /proc too) in which a process sees only the processes it
  // may ptrace: its own attempt's, as the job's account, and never another job's command line.
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible") != 0) {
    proc_error = std::string("mounting /proc with hidepid=invisible: ") + std::strerror(errno);
  }
  const int fd = ::open("/proc/thread-self/ns/mnt", O_RDONLY | O_CLOEXEC);
  return fd >= 0 ? fd : failed("opening /proc/thread-self/ns/mnt");
}

}  // namespace

PrivateTmp::PrivateTmp(std::int64_t size_mb) {
  std::string options = "mode=1777";
  if (size_mb > 0) options += ",size=" + std::to_string(size_mb) + "m";
  std::string error;
  std::thread([&] { fd_ = make_namespace(options, error, proc_error_); }).join();
  if (fd_ < 0) throw std::runtime_error("cannot make the attempt's private /tmp and /dev/shm: " + error);
}

PrivateTmp::~PrivateTmp() { ::close(fd_); }

std::string path_in_private_dirs(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::weakly_canonical(path, ec);
    for (const char* dir : {"/tmp", "/dev/shm"}) {
      // Inside `dir` when the relative path from it does not climb out.
      const std::filesystem::path inside = (ec ? std::filesystem::path(path) : real).lexically_relative(dir);
      if (!inside.empty() && *inside.begin() != "..") return path;
    }
  }
  return "";
}

void remove_files_of_group(gid_t gid, const std::vector<std::string>& dirs) {
  for (const std::string& dir : dirs) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      struct stat st {};
      if (::lstat(entry.path().c_str(), &st) != 0 || st.st_gid != gid) continue;
      std::error_code remove_ec;
      std::filesystem::remove_all(entry.path(), remove_ec);
      if (remove_ec) {
        spdlog::warn("event=attempt_file_not_removed path={} gid={} error=\"{}\"", entry.path().string(), gid,
                     remove_ec.message());
      }
    }
  }
}

}  // namespace trainyard::agent
