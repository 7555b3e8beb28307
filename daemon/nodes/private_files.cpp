#include "daemon/nodes/private_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <spdlog/spdlog.h>
#include <stdexcept>

namespace trainyard::daemon {
namespace fs = std::filesystem;
namespace {

std::string octal(fs::perms perms) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(perms & fs::perms::mask));
  return text;
}

}  // namespace

void write_file_atomically(const fs::path& path, const std::string& content, mode_t mode) {
  const fs::path tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_CREAT | O_WRONLY | O_TRUNC, mode);
  if (fd < 0) throw std::runtime_error("cannot write " + tmp.string());
  const bool ok = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot write " + tmp.string());
  fs::rename(tmp, path);
}

void make_private(const fs::path& path, fs::perms perms) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return;
  const fs::perms was = status.permissions() & fs::perms::mask;
  if (was == perms) return;
  fs::permissions(path, perms, fs::perm_options::replace, ec);
  if (ec) throw std::runtime_error("cannot make " + path.string() + " private (mode " + octal(was) + "): " + ec.message());
  // Only taking access away is news: opening a private directory to traversal is the plan.
  if ((was & ~perms) != fs::perms::none) {
    spdlog::warn("event=file_mode_fixed path={} was={} now={}", path.string(), octal(was), octal(perms));
  }
}

Result<void> check_token_file_private(const fs::path& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return {};
  const fs::perms others = fs::perms::group_all | fs::perms::others_all;
  if ((status.permissions() & others) == fs::perms::none) return {};
  return Error::invalid_input(path.string(), path.string() + " has mode " + octal(status.permissions()) +
                                                 ": group or others may read it, so its token may have leaked; replace "
                                                 "the token (delete the file and restart, or rotate it) and keep the "
                                                 "file 0600");
}

}  // namespace trainyard::daemon
