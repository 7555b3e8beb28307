#include "agent/node_credential.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <system_error>

namespace trainyard::agent {

std::string node_credential_path(const std::string& work_dir) { return work_dir + "/node.credential"; }

std::string load_node_credential(const std::string& path) {
  std::ifstream in(path);
  std::string secret;
  std::getline(in, secret);
  return secret;
}

void save_node_credential(const std::string& path, const std::string& secret) {
  const std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot create " + tmp);
  const std::string text = secret + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  const int error = errno;
  ::close(fd);
  if (!written) throw std::system_error(error, std::generic_category(), "cannot write " + tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0) throw std::system_error(errno, std::generic_category(), "cannot rename to " + path);
}

}  // namespace trainyard::agent
