#include "agent/process_registry.h"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <spdlog/spdlog.h>

namespace trainyard::agent {

std::optional<RecordedGroup> parse_recorded_group(const std::string& text) {
  std::istringstream in(text);
  RecordedGroup group;
  std::string rest;
  if (!(in >> group.attempt_id >> group.start_time) || (in >> rest) || group.attempt_id <= 0) return std::nullopt;
  return group;
}

std::optional<std::uint64_t> process_start_time(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ')'.
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i < 22; ++i) {
    if (!(fields >> field)) return std::nullopt;
  }
  std::uint64_t start = 0;
  if (!(fields >> start)) return std::nullopt;
  return start;
}

ProcessRegistry::ProcessRegistry(std::string dir) : dir_(std::move(dir)) { std::filesystem::create_directories(dir_); }

void ProcessRegistry::record(pid_t pgid, std::int64_t attempt_id) {
  const auto start = process_start_time(pgid);
  if (!start) return;  // already gone: nothing to leave behind
  std::ofstream(dir_ + "/" + std::to_string(pgid)) << attempt_id << " " << *start << "\n";
}

void ProcessRegistry::forget(pid_t pgid) {
  std::error_code ec;
  std::filesystem::remove(dir_ + "/" + std::to_string(pgid), ec);
}

int ProcessRegistry::kill_leftovers() {
  int killed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const auto group = parse_recorded_group(text.str());
    pid_t pgid = 0;
    try {
      std::size_t used = 0;
      pgid = static_cast<pid_t>(std::stol(name, &used));
      if (used != name.size()) pgid = 0;
    } catch (const std::exception&) {
      pgid = 0;
    }
    if (!group || pgid <= 1) {
      spdlog::warn("event=bad_process_record file={}", entry.path().string());
    } else if (const auto leader = process_start_time(pgid); !leader || *leader == group->start_time) {
      // A dead leader's pid is not reused while its group has members, so the members are ours.
      if (::killpg(pgid, SIGKILL) == 0) {
        ++killed;
        spdlog::warn("event=leftover_processes_killed attempt={} pgid={}", group->attempt_id, pgid);
      }
    }
    std::filesystem::remove(entry.path(), ec);
  }
  return killed;
}

}  // namespace trainyard::agent
