#include "agent/rank_activity.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "agent/process_snapshot.h"
#include "agent/python_stacks.h"

namespace trainyard::agent {
namespace {

// A stacks file's size; 0 when absent. The job owns the file: never followed through a link.
std::int64_t file_size(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  return st.st_size;
}

// What a stacks file holds from `offset`, at most 64 KiB, read without blocking (the job may have
// put a FIFO there) and without following a link.
std::string read_from(const std::string& path, std::int64_t offset) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > offset) {
    text.resize(static_cast<std::size_t>(std::min<std::int64_t>(st.st_size - offset, 64 * 1024)));
    const ssize_t n = ::pread(fd, text.data(), text.size(), offset);
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  }
  ::close(fd);
  return text;
}

}  // namespace

int stacks_signal() { return SIGRTMIN + 3; }

bool ActivityMeter::look(MonoTime at, const std::vector<ProcessUsage>& processes, std::int64_t log_bytes,
                         std::int64_t own_bytes) {
  std::int64_t cpu_ms = 0;
  const bool first = !last_look_;
  const bool acted = active_since_last(processes, log_bytes, own_bytes, cpu_ms);
  const bool active = busy(at, cpu_ms) || acted || first;
  if (active) active_at_ = at;
  last_look_ = at;
  processes_.clear();
  for (const auto& p : processes) processes_[p.pid] = p;
  log_bytes_ = log_bytes;
  own_bytes_ = own_bytes;
  return active;
}

bool ActivityMeter::busy(MonoTime at, std::int64_t cpu_ms) {
  const std::int64_t used = (cpu_marks_.empty() ? 0 : cpu_marks_.back().used_ms) + cpu_ms;
  cpu_marks_.push_back({at, used});
  // The window starts at the latest look at least kCpuWindow old, or the oldest there is.
  while (cpu_marks_.size() > 2 && at - cpu_marks_[1].at >= kCpuWindow) cpu_marks_.pop_front();
  const CpuMark& start = cpu_marks_.front();
  const auto span = std::chrono::duration_cast<Millis>(at - start.at).count();
  return span > 0 && used - start.used_ms > 0 && static_cast<double>(used - start.used_ms) >= kBusyShare * static_cast<double>(span);
}

bool ActivityMeter::active_since_last(const std::vector<ProcessUsage>& processes, std::int64_t log_bytes,
                                      std::int64_t own_bytes, std::int64_t& cpu_ms) const {
  bool active = log_bytes > log_bytes_;
  std::int64_t io_bytes = 0;
  for (const auto& p : processes) {
    const auto before = processes_.find(p.pid);
    if (before == processes_.end() || before->second.start_time != p.start_time) {
      active = true;  // it started
      continue;
    }
    cpu_ms += std::max<std::int64_t>(p.cpu_ms - before->second.cpu_ms, 0);
    io_bytes += std::max<std::int64_t>(p.io_bytes - before->second.io_bytes, 0);
  }
  return active || io_bytes > std::max<std::int64_t>(own_bytes - own_bytes_, 0);
}

Millis ActivityMeter::idle(MonoTime now) const {
  return last_look_ ? std::max(Millis(0), std::chrono::duration_cast<Millis>(now - active_at_)) : Millis(0);
}

void RankActivity::look(MonoTime now, const std::vector<pid_t>& processes, const std::vector<RankLeader>& leaders,
                        std::int64_t log_bytes, AttemptReport& report) {
  std::vector<ProcessUsage> usage;
  const std::int64_t ticks = clock_ticks_per_second();
  for (const pid_t pid : processes) {
    if (const auto s = snapshot_process(pid)) {
      usage.push_back({pid, s->stat.start_time, s->stat.cpu_ticks * 1000 / ticks, s->io_bytes});
    }
  }
  std::int64_t own_bytes = 0;
  for (const auto& leader : leaders) own_bytes += file_size(leader.stacks_file);
  if (meter_.look(now, usage, log_bytes, own_bytes)) asked_this_spell_ = false;
  const Millis idle = meter_.idle(now);
  report.idle_ms = idle.count();
  if (idle < kStacksAfterIdle) return;
  if (!asked_this_spell_) {
    ask_for_stacks(leaders);
    asked_this_spell_ = true;
  }
  report.where = where(leaders);
}

void RankActivity::ask_for_stacks(const std::vector<RankLeader>& leaders) {
  for (const auto& leader : leaders) {
    if (leader.pid <= 0) continue;
    const auto snapshot = snapshot_process(leader.pid);
    const std::int64_t size = file_size(leader.stacks_file);
    if (!snapshot || !snapshot->catches(stacks_signal_) || size > kMaxStacksFileBytes) continue;
    if (snapshot->stat.state == 'T' || snapshot->stat.state == 't' || snapshot->stat.state == 'Z') continue;
    dump_offsets_[leader.stacks_file] = size;
    if (::kill(leader.pid, stacks_signal_) != 0) dump_offsets_.erase(leader.stacks_file);
  }
}

std::vector<ProcessWhere> RankActivity::where(const std::vector<RankLeader>& leaders) const {
  std::vector<ProcessWhere> out;
  for (const auto& leader : leaders) {
    if (leader.pid <= 0) continue;
    const auto snapshot = snapshot_process(leader.pid);
    if (!snapshot) continue;
    ProcessWhere w{leader.rank, leader.pid, std::string(1, snapshot->stat.state), printable(snapshot->wchan), ""};
    if (const auto offset = dump_offsets_.find(leader.stacks_file); offset != dump_offsets_.end()) {
      w.stack = main_thread_stack(read_from(leader.stacks_file, offset->second), kMaxStackChars);
    }
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace trainyard::agent
