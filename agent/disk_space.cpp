#include "agent/disk_space.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

namespace trainyard::agent {
namespace {
constexpr std::uint64_t kMiB = 1024 * 1024;
}  // namespace

std::optional<DiskSpace> measure_disk(const std::string& role, const std::filesystem::path& path) {
  struct statvfs fs {};
  if (::statvfs(path.c_str(), &fs) != 0) return std::nullopt;
  const std::uint64_t unit = fs.f_frsize ? fs.f_frsize : fs.f_bsize;
  // f_bavail, not f_bfree: what an unprivileged job can still write.
  return DiskSpace{role, static_cast<std::int64_t>(fs.f_bavail * unit / kMiB), static_cast<std::int64_t>(fs.f_blocks * unit / kMiB)};
}

std::vector<DiskSpace> measure_disks(const std::string& work_dir, const std::string& checkpoint_root) {
  std::vector<DiskSpace> disks;
  if (auto work = measure_disk("work", work_dir)) disks.push_back(*work);
  if (!checkpoint_root.empty()) {
    if (auto checkpoint = measure_disk("checkpoint", checkpoint_root)) disks.push_back(*checkpoint);
  }
  return disks;
}

std::int64_t log_bytes_in(const std::filesystem::path& attempt_dir) {
  std::int64_t bytes = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(attempt_dir, ec)) {
    std::error_code size_ec;
    if (entry.path().extension() != ".log" || entry.is_symlink(size_ec) || !entry.is_regular_file(size_ec)) continue;
    const auto size = entry.file_size(size_ec);
    if (!size_ec) bytes += static_cast<std::int64_t>(size);
  }
  return bytes;
}

namespace {

// Regular files under `dir`, symlinks not followed, at most kMaxWorkEntriesCounted entries; the
// *.log files directly in it only with `with_top_logs`.
std::int64_t bytes_under(const std::filesystem::path& dir, bool with_top_logs) {
  namespace fs = std::filesystem;
  std::int64_t bytes = 0;
  std::size_t visited = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator() && visited < kMaxWorkEntriesCounted; it.increment(ec), ++visited) {
    std::error_code size_ec;
    const fs::directory_entry& entry = *it;
    if (entry.is_symlink(size_ec) || !entry.is_regular_file(size_ec)) continue;
    if (!with_top_logs && it.depth() == 0 && entry.path().extension() == ".log") continue;
    const auto size = entry.file_size(size_ec);
    if (!size_ec) bytes += static_cast<std::int64_t>(size);
  }
  return bytes;
}

}  // namespace

std::int64_t work_bytes_in(const std::filesystem::path& attempt_dir) { return bytes_under(attempt_dir, false); }

std::int64_t tree_bytes_in(const std::filesystem::path& dir) { return bytes_under(dir, true); }

std::optional<dev_t> device_of(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return st.st_dev;
}

}  // namespace trainyard::agent
