#include "agent/process_registry.h"

#include "agent/process_snapshot.h"

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>
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
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const auto stat = parse_process_stat(line);
  if (!stat) return std::nullopt;
  return stat->start_time;
}

namespace {

// The journal is rewritten once it holds this many lines and four times as many as live groups:
// one inode a thousand attempts rather than one an attempt.
constexpr std::size_t kRewriteAfterLines = 1024;

std::optional<pid_t> parse_pgid(const std::string& text) {
  try {
    std::size_t used = 0;
    const long value = std::stol(text, &used);
    if (used != text.size() || value <= 1 || value > std::numeric_limits<pid_t>::max()) return std::nullopt;
    return static_cast<pid_t>(value);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string start_line(pid_t pgid, const RecordedGroup& group) {
  return "start " + std::to_string(pgid) + " " + std::to_string(group.attempt_id) + " " +
         std::to_string(group.start_time) + "\n";
}

// Applies one journal line to the live groups; false when the line is neither form.
bool replay(const std::string& line, std::map<pid_t, RecordedGroup>& live) {
  std::istringstream fields(line);
  std::string kind, pgid_text, rest;
  fields >> kind >> pgid_text;
  std::getline(fields, rest);
  const auto pgid = parse_pgid(pgid_text);
  if (!pgid) return false;
  if (kind == "start") {
    const auto group = parse_recorded_group(rest);
    if (!group) return false;
    live[*pgid] = *group;
    return true;
  }
  if (kind == "end" && rest.find_first_not_of(" \t") == std::string::npos) {
    live.erase(*pgid);
    return true;
  }
  return false;
}

// Sends `signal` to the group unless its pid now leads an unrelated process; false when it did not
// (or the group has no members left).
bool signal_if_ours(pid_t pgid, const RecordedGroup& group, int signal) {
  const auto leader = process_start_time(pgid);
  // A dead leader's pid is not reused while its group has members, so the members are ours.
  if (leader && *leader != group.start_time) return false;
  return ::killpg(pgid, signal) == 0;
}

bool kill_if_ours(pid_t pgid, const RecordedGroup& group) {
  if (!signal_if_ours(pgid, group, SIGKILL)) return false;
  spdlog::warn("event=leftover_processes_killed attempt={} pgid={}", group.attempt_id, pgid);
  return true;
}

}  // namespace

ProcessRegistry::ProcessRegistry(std::string dir) : dir_(std::move(dir)), journal_path_(dir_ + "/journal") {
  std::filesystem::create_directories(dir_);
  std::ifstream in(journal_path_);
  std::size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    ++journal_lines_;
    // The line is not logged: a record is ours, but a damaged one may hold anything.
    if (!replay(line, live_)) spdlog::warn("event=bad_process_record file={} line={}", journal_path_, number);
  }
}

void ProcessRegistry::append(const std::string& line) {
  if (!journal_.is_open()) journal_.open(journal_path_, std::ios::app);
  // Flushed per line: an agent killed right after leaves whole lines in the page cache.
  journal_ << line << std::flush;
  ++journal_lines_;
  if (!journal_) {
    spdlog::warn("event=process_record_failed file={}", journal_path_);
    journal_.close();  // reopened, and tried again, by the next line
  }
}

void ProcessRegistry::rewrite_journal() {
  const std::string next = journal_path_ + ".next";
  {
    std::ofstream out(next, std::ios::trunc);
    for (const auto& [pgid, group] : live_) out << start_line(pgid, group);
    out.flush();
    if (!out) {
      spdlog::warn("event=process_record_failed file={}", next);
      return;  // the journal as it is stays right, only longer
    }
  }
  journal_.close();
  std::error_code ec;
  std::filesystem::rename(next, journal_path_, ec);
  if (ec) {
    spdlog::warn("event=process_record_failed file={} error=\"{}\"", journal_path_, ec.message());
    return;
  }
  journal_lines_ = live_.size();
}

void ProcessRegistry::record(pid_t pgid, std::int64_t attempt_id) {
  const auto start = process_start_time(pgid);
  if (!start) return;  // already gone: nothing to leave behind
  const RecordedGroup group{attempt_id, *start};
  live_[pgid] = group;
  append(start_line(pgid, group));
}

void ProcessRegistry::forget(pid_t pgid) {
  if (live_.erase(pgid) == 0) return;
  append("end " + std::to_string(pgid) + "\n");
  if (journal_lines_ >= kRewriteAfterLines && journal_lines_ >= 4 * live_.size()) rewrite_journal();
}

int ProcessRegistry::kill_leftovers() {
  int killed = 0;
  for (const auto& [pgid, group] : live_) killed += kill_if_ours(pgid, group) ? 1 : 0;
  live_.clear();
  journal_.close();
  journal_lines_ = 0;
  std::error_code ec;
  std::filesystem::remove(journal_path_, ec);
  // Old-form records: a file per group, named by its pgid.
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const auto group = parse_recorded_group(text.str());
    const auto pgid = parse_pgid(entry.path().filename().string());
    if (!group || !pgid) {
      spdlog::warn("event=bad_process_record file={}", entry.path().string());
    } else if (kill_if_ours(*pgid, *group)) {
      ++killed;
    }
    std::filesystem::remove(entry.path(), ec);
  }
  return killed;
}

namespace {

std::map<pid_t, RecordedGroup> recorded_groups(const std::string& dir) {
  std::map<pid_t, RecordedGroup> live;
  std::ifstream in(dir + "/journal");
  for (std::string line; std::getline(in, line);) replay(line, live);
  return live;
}

bool zombie_or_gone(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return true;
  const auto stat = parse_process_stat(line);
  return !stat || stat->state == 'Z';
}

}  // namespace

int signal_recorded_groups(const std::string& dir, int signal) {
  int signalled = 0;
  for (const auto& [pgid, group] : recorded_groups(dir)) signalled += signal_if_ours(pgid, group, signal) ? 1 : 0;
  return signalled;
}

int running_in_recorded_groups(const std::string& dir) {
  std::vector<pid_t> ours;
  for (const auto& [pgid, group] : recorded_groups(dir)) {
    if (signal_if_ours(pgid, group, 0)) ours.push_back(pgid);
  }
  if (ours.empty()) return 0;
  const std::vector<pid_t> members = processes_in_groups(ours);
  return static_cast<int>(std::count_if(members.begin(), members.end(), [](pid_t pid) { return !zombie_or_gone(pid); }));
}

}  // namespace trainyard::agent
