#include "agent/command_checkpoints.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <spdlog/spdlog.h>

#include "checkpoint/checkpoint.h"

namespace trainyard::agent {
namespace {

bool same_time(const timespec& a, const timespec& b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

}  // namespace

CommandCheckpointWatch::CommandCheckpointWatch(std::filesystem::path dir, std::optional<gid_t> attempt_gid)
    : dir_(std::move(dir)), attempt_gid_(attempt_gid), seen_(scan()) {}

std::map<std::filesystem::path, timespec> CommandCheckpointWatch::scan() const {
  std::map<std::filesystem::path, timespec> found;
  const int fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return found;  // not made yet, or not a directory: nothing written
  DIR* listing = ::fdopendir(fd);
  if (!listing) {
    ::close(fd);
    return found;
  }
  std::size_t entries = 0;
  while (const dirent* entry = ::readdir(listing)) {
    if (++entries > kMaxScannedEntries) {
      spdlog::warn("event=checkpoint_scan_truncated dir={} entries={}", dir_.string(), kMaxScannedEntries);
      break;
    }
    const std::filesystem::path path = dir_ / entry->d_name;
    if (!checkpoint::step_of(path)) continue;
    struct stat st {};
    if (::fstatat(fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) continue;
    if (attempt_gid_ && st.st_gid != *attempt_gid_) continue;  // another attempt's
    found[path] = st.st_mtim;
  }
  ::closedir(listing);
  return found;
}

std::vector<CheckpointReport> CommandCheckpointWatch::take_new() {
  std::vector<CheckpointReport> reports;
  for (const auto& [path, mtime] : scan()) {
    const auto known = seen_.find(path);
    if (known != seen_.end() && same_time(known->second, mtime)) continue;
    if (reports.size() == kMaxCheckpointReports) break;
    std::string digest;
    if (checkpoint::has_manifest(path)) digest = checkpoint::manifest_sha256(path).value_or("");
    reports.push_back({*checkpoint::step_of(path), std::move(digest)});
    seen_[path] = mtime;
  }
  std::sort(reports.begin(), reports.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  return reports;
}

}  // namespace trainyard::agent
