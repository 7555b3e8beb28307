#include "agent/process_snapshot.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

namespace trainyard::agent {
namespace {

// A small /proc file, whole: nullopt when it cannot be opened (the process is gone).
std::optional<std::string> read_proc_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text(8192, '\0');
  std::size_t used = 0;
  while (used < text.size()) {
    const ssize_t n = ::read(fd, text.data() + used, text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    used += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(used);
  return text;
}

template <typename Number>
bool parse_number(std::string_view text, Number& out, int base = 10) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return error == std::errc() && end == text.data() + text.size();
}

// The value after "key" on its own line of a "Key:\tvalue" text.
std::string_view keyed_field(std::string_view text, std::string_view key) {
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, end - at);
    if (line.starts_with(key)) {
      line.remove_prefix(key.size());
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t' || line.front() == ':')) line.remove_prefix(1);
      return line;
    }
    at = end + 1;
  }
  return {};
}

}  // namespace

std::optional<ProcessStat> parse_process_stat(std::string_view line) {
  const auto close = line.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> fields;  // fields 3 onwards
  std::string_view rest = line.substr(close + 1);
  while (!rest.empty()) {
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\n')) rest.remove_prefix(1);
    const std::size_t end = std::min(rest.find_first_of(" \n"), rest.size());
    if (end > 0) fields.push_back(rest.substr(0, end));
    rest.remove_prefix(end);
  }
  // Field N is fields[N - 3]: state 3, pgrp 5, utime 14, stime 15, starttime 22.
  if (fields.size() < 20 || fields[0].size() != 1) return std::nullopt;
  ProcessStat stat;
  stat.state = fields[0][0];
  std::int64_t utime = 0, stime = 0;
  if (!parse_number(fields[2], stat.group) || !parse_number(fields[11], utime) || !parse_number(fields[12], stime) ||
      !parse_number(fields[19], stat.start_time)) {
    return std::nullopt;
  }
  stat.cpu_ticks = utime + stime;
  return stat;
}

std::int64_t parse_io_bytes(std::string_view text) {
  std::int64_t total = 0;
  for (std::string_view key : {"rchar", "wchar"}) {
    std::int64_t value = 0;
    if (parse_number(keyed_field(text, key), value)) total += value;
  }
  return total;
}

std::uint64_t parse_caught_signals(std::string_view text) {
  std::uint64_t mask = 0;
  return parse_number(keyed_field(text, "SigCgt"), mask, 16) ? mask : 0;
}

std::optional<ProcessSnapshot> snapshot_process(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  const auto stat_text = read_proc_file(dir + "/stat");
  if (!stat_text) return std::nullopt;
  const auto stat = parse_process_stat(*stat_text);
  if (!stat) return std::nullopt;
  ProcessSnapshot snapshot{pid, *stat};
  snapshot.io_bytes = parse_io_bytes(read_proc_file(dir + "/io").value_or(""));
  snapshot.caught_signals = parse_caught_signals(read_proc_file(dir + "/status").value_or(""));
  const std::string wchan = read_proc_file(dir + "/wchan").value_or("");
  if (wchan != "0") snapshot.wchan = wchan.substr(0, 64);
  return snapshot;
}

std::vector<pid_t> processes_in_groups(const std::vector<pid_t>& groups) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (!proc) return found;
  while (const dirent* entry = ::readdir(proc)) {
    pid_t pid = 0;
    if (!parse_number(std::string_view(entry->d_name), pid) || pid <= 0) continue;
    const auto text = read_proc_file("/proc/" + std::string(entry->d_name) + "/stat");
    const auto stat = text ? parse_process_stat(*text) : std::nullopt;
    if (stat && std::find(groups.begin(), groups.end(), stat->group) != groups.end()) found.push_back(pid);
  }
  ::closedir(proc);
  return found;
}

std::int64_t clock_ticks_per_second() {
  static const std::int64_t ticks = std::max<long>(::sysconf(_SC_CLK_TCK), 1);
  return ticks;
}

}  // namespace trainyard::agent
