#include "agent/launch_failure.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace trainyard::agent {
namespace {

std::string account_text(const JobAccount* account) {
  if (!account) return "the agent's account (uid " + std::to_string(::geteuid()) + ")";
  return "account " + account->name + " (uid " + std::to_string(account->uid) + ")";
}

// Whether the account's permission bits in `st` include `bit` (S_IXOTH-style: 1 execute, 4 read).
bool permits(const struct stat& st, const JobAccount* account, mode_t bit) {
  if (!account || account->uid == 0) return true;
  if (st.st_uid == account->uid) return (st.st_mode & (bit << 6)) != 0;
  const bool in_group = st.st_gid == account->gid ||
                        std::find(account->groups.begin(), account->groups.end(), st.st_gid) != account->groups.end();
  return (st.st_mode & (in_group ? bit << 3 : bit)) != 0;
}

// The file's metadata as the job's account could see it: nothing when a directory on the way is
// not the account's to search. The agent looks as root, and must tell a job no more than its own
// account could find out (another user's files stay unseen).
std::optional<struct stat> stat_of(const std::string& path, const JobAccount* account) {
  const std::filesystem::path p(path);
  for (std::filesystem::path dir = p.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !permits(st, account, S_IXOTH)) return std::nullopt;
    if (dir == dir.root_path()) break;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return st;
}

std::string mode_text(const struct stat& st) {
  return fmt::format("mode {:04o}, owner uid {} gid {}", st.st_mode & 07777, st.st_uid, st.st_gid);
}

// The file execvpe would have run: argv[0] itself when it names a path, else the first match on
// the PATH (an empty entry is the current directory, as execvpe takes it).
std::optional<std::string> resolve_program(const LaunchContext& c) {
  const auto absolute = [&](const std::string& p) {
    return std::filesystem::path(p.starts_with('/') ? p : c.start_dir + "/" + p).lexically_normal().string();
  };
  if (c.program.find('/') != std::string::npos) {
    const std::string path = absolute(c.program);
    return stat_of(path, c.account) ? std::optional(path) : std::nullopt;
  }
  std::size_t at = 0;
  while (at <= c.search_path.size()) {
    const std::size_t end = std::min(c.search_path.find(':', at), c.search_path.size());
    const std::string dir = c.search_path.substr(at, end - at);
    const std::string candidate = absolute((dir.empty() ? "." : dir) + "/" + c.program);
    if (const auto st = stat_of(candidate, c.account); st && S_ISREG(st->st_mode)) return candidate;
    at = end + 1;
  }
  return std::nullopt;
}

// The interpreter a "#!" line names, if the file has one.
std::optional<std::string> interpreter_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line) || !line.starts_with("#!")) return std::nullopt;
  line.erase(0, 2);
  const auto first = line.find_first_not_of(" \t");
  if (first == std::string::npos) return std::nullopt;
  const auto last = line.find_first_of(" \t\r", first);
  return line.substr(first, last == std::string::npos ? std::string::npos : last - first);
}

std::string exec_failure(const SpawnFailure& f, const LaunchContext& c) {
  const std::optional<std::string> file = resolve_program(c);
  if (!file) {
    if (f.error == EACCES) {
      return fmt::format("{} cannot be executed by {}: Permission denied", c.program, account_text(c.account));
    }
    if (c.program.find('/') != std::string::npos) {
      return fmt::format("no such file: {} (looked for in {})", c.program, c.start_dir);
    }
    return fmt::format("command not found: {} (PATH searched: {})", c.program, c.search_path);
  }
  const auto st = stat_of(*file, c.account);
  if (st && S_ISDIR(st->st_mode)) return fmt::format("{} is a directory, not a program", *file);
  if (f.error == ENOENT && st && permits(*st, c.account, S_IROTH)) {
    if (const auto interpreter = interpreter_of(*file)) {
      return fmt::format("interpreter not found: {} names {} on its #! line, and there is no such file", *file,
                         *interpreter);
    }
  }
  if (f.error == EACCES && st && S_ISREG(st->st_mode) && (st->st_mode & 0111) == 0) {
    return fmt::format("{} is not executable ({}): chmod +x it, or run it through its interpreter (python3 {})", *file,
                       mode_text(*st), c.program);
  }
  if (f.error == EACCES && st) {
    return fmt::format("{} cannot be executed by {} ({}): Permission denied", *file, account_text(c.account),
                       mode_text(*st));
  }
  return fmt::format("cannot execute {}: {}", *file, std::strerror(f.error));
}

}  // namespace

std::string describe_launch_failure(const SpawnFailure& f, const LaunchContext& c) {
  std::string what;
  switch (f.stage) {
    case SpawnStage::enter_workdir: {
      const std::string& dir = c.workdir.value_or(c.start_dir);
      const auto st = stat_of(dir, c.account);
      what = fmt::format("the working directory {} cannot be entered by {}: {}{}", dir, account_text(c.account),
                         std::strerror(f.error), st ? " (" + mode_text(*st) + ")" : "");
      break;
    }
    case SpawnStage::exec:
      what = exec_failure(f, c);
      break;
    case SpawnStage::open_output_copy:
    case SpawnStage::open_error_copy: {
      const bool output = f.stage == SpawnStage::open_output_copy;
      what = fmt::format("the file {} ({}) cannot be opened by {} in {}: {}", output ? c.output_copy : c.error_copy,
                         output ? "--output" : "--error", account_text(c.account), c.workdir.value_or(c.start_dir),
                         std::strerror(f.error));
      break;
    }
    case SpawnStage::private_tmp:
      // The node's doing, not the job's (daemon/base/failure_rules.cpp).
      return fmt::format("node files: the attempt's private /tmp and /dev/shm: {}: {}", f.what, std::strerror(f.error));
    case SpawnStage::job_network:
      return fmt::format("node network: {}: {}", f.what, std::strerror(f.error));
    default:
      what = fmt::format("{}: {}", f.what, std::strerror(f.error));
      break;
  }
  return std::string(kLaunchFailedPrefix) + what;
}

}  // namespace trainyard::agent
