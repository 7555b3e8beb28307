#include "agent/job_uid_registry.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace trainyard::agent {
namespace {

std::runtime_error registry_error(const std::string& what, const std::string& path) {
  return std::runtime_error("job uid registry: cannot " + what + " " + path + ": " + std::strerror(errno));
}

std::string read_small(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throw registry_error("read", path);
  std::array<char, 128> buffer{};
  const ssize_t n = ::read(fd, buffer.data(), buffer.size());
  ::close(fd);
  if (n < 0) throw registry_error("read", path);
  return std::string(buffer.data(), static_cast<std::size_t>(n));
}

}  // namespace

std::optional<std::string> claim_job_uid(const std::string& registry_dir, uid_t uid, const std::string& cluster,
                                         std::int64_t job) {
  std::error_code ec;
  std::filesystem::create_directories(registry_dir, ec);
  if (ec) throw std::runtime_error("job uid registry: cannot create " + registry_dir + ": " + ec.message());
  const std::string path = registry_dir + "/" + std::to_string(uid);
  const std::string holder = (cluster.empty() ? "-" : cluster) + " " + std::to_string(job) + "\n";
  // Written whole under a name of our own, then linked into place: another agent of the host
  // claiming the same uid at the same moment sees either nothing or the whole record.
  std::string draft = path + ".draft-XXXXXX";
  const int fd = ::mkostemp(draft.data(), O_CLOEXEC);
  if (fd < 0) throw registry_error("write", draft);
  const bool written = ::write(fd, holder.data(), holder.size()) == static_cast<ssize_t>(holder.size()) && ::fsync(fd) == 0;
  ::close(fd);
  const bool linked = written && ::link(draft.c_str(), path.c_str()) == 0;
  const int link_errno = errno;
  ::unlink(draft.c_str());
  if (!written) throw registry_error("write", draft);
  if (linked) return std::nullopt;
  errno = link_errno;
  if (link_errno != EEXIST) throw registry_error("record", path);
  const std::string recorded = read_small(path);
  if (recorded == holder) return std::nullopt;
  std::string who = recorded.substr(0, recorded.find('\n'));
  const auto space = who.find(' ');
  if (space != std::string::npos) who = "job " + who.substr(space + 1) + " of cluster " + who.substr(0, space);
  return "uid " + std::to_string(uid) + " on this node belongs to " + who + " (" + path +
         "), whose files may still be here; the job is not run as it";
}

}  // namespace trainyard::agent
