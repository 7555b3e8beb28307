#include "agent/job_reach.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "proto/errors.h"

namespace trainyard::agent {

std::optional<std::string> first_unsearchable(const JobAccount& account, const std::string& path) {
  // "/", "/srv", "/srv/work", ...: built before the fork, so that the child allocates nothing.
  std::vector<std::string> prefixes;
  std::filesystem::path so_far;
  for (const auto& part : std::filesystem::path(path).lexically_normal()) {
    if (part.empty()) continue;  // the empty last element of "dir/"
    so_far /= part;
    prefixes.push_back(so_far.string());
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(error));
  }
  if (pid == 0) {
    ::close(fds[0]);
    if (drop_privileges(account) != nullptr) ::_exit(2);
    int blocked = -1;  // the index of the first prefix the account may not search
    for (std::size_t i = 0; i < prefixes.size(); ++i) {
      if (::access(prefixes[i].c_str(), X_OK) == 0) continue;
      if (errno == EACCES) blocked = static_cast<int>(i);
      break;  // not there (yet), or not a directory: nothing further to judge
    }
    const bool told = ::write(fds[1], &blocked, sizeof blocked) == static_cast<ssize_t>(sizeof blocked);
    ::_exit(told ? 0 : 3);
  }
  ::close(fds[1]);
  int blocked = -1;
  ssize_t got = 0;
  do {
    got = ::read(fds[0], &blocked, sizeof blocked);
  } while (got < 0 && errno == EINTR);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got != static_cast<ssize_t>(sizeof blocked) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("could not check, as " + account.name + ", whether it can reach " + path +
                             " (switching to the account needs root)");
  }
  if (blocked < 0 || static_cast<std::size_t>(blocked) >= prefixes.size()) return std::nullopt;
  return prefixes[static_cast<std::size_t>(blocked)];
}

void check_jobs_can_reach(const JobAccounts& accounts, const std::string& flag, const std::string& dir) {
  for (const JobAccount& account : accounts.possible_accounts()) {
    const auto blocked = first_unsearchable(account, dir);
    if (!blocked) continue;
    struct stat st {};
    const std::string how = ::stat(blocked->c_str(), &st) == 0
                                ? fmt::format("mode {:04o}, owner uid {}", st.st_mode & 07777, st.st_uid)
                                : std::string("cannot stat it: ") + std::strerror(errno);
    throw InvalidInput(flag,
                       fmt::format("jobs cannot reach \"{}\": \"{}\" ({}) is not searchable by {} (uid {}), one of "
                                   "the accounts jobs run as; choose a directory they can reach, or let them "
                                   "search it (for example chmod o+x \"{}\")",
                                   dir, *blocked, how, account.name, account.uid, *blocked));
  }
}

}  // namespace trainyard::agent
