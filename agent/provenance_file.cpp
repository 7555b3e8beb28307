#include "agent/provenance_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "proto/errors.h"
#include "proto/provenance.h"

namespace trainyard::agent {
namespace {

UserFacts refused(const std::string& why) { return UserFacts{nullptr, "$TRAINYARD_PROVENANCE_FILE " + why}; }

// At most `limit` + 1 bytes, so a file that grew past the limit after fstat still reads as too large.
std::string read_at_most(int fd, std::size_t limit) {
  std::string text(limit + 1, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  return text;
}

}  // namespace

UserFacts read_user_facts(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) return {};  // the job added nothing
    if (errno == ELOOP) return refused("is a symbolic link (not followed)");
    return refused(std::string("cannot be opened: ") + std::strerror(errno));
  }
  struct stat st {};
  std::string text;
  std::string problem;
  if (::fstat(fd, &st) != 0) {
    problem = std::string("cannot be examined: ") + std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    problem = "is not a regular file";
  } else if (st.st_nlink != 1) {
    problem = "has other hard links (not read)";
  } else if (static_cast<std::size_t>(st.st_size) > kMaxUserFactsBytes) {
    problem = "is larger than " + std::to_string(kMaxUserFactsBytes) + " bytes";
  } else {
    text = read_at_most(fd, kMaxUserFactsBytes);
  }
  ::close(fd);
  if (!problem.empty()) return refused(problem);
  try {
    return UserFacts{parse_user_facts(text), ""};
  } catch (const InvalidInput& e) {
    return refused(e.message());
  }
}

}  // namespace trainyard::agent
