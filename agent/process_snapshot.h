#pragma once
// What /proc says about one process, for telling a rank that works from one that waits
// (agent/rank_activity.h): its state, CPU time, I/O, the kernel function it sleeps in and the
// signals it catches. Reading never blocks on the process and never follows its links.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainyard::agent {

// The fields of /proc/PID/stat this agent uses.
struct ProcessStat {
  char state = '?';              // R, S, D, T (stopped), t (traced), Z, ...
  pid_t group = 0;               // its process group
  std::int64_t cpu_ticks = 0;    // user + system time, in clock ticks
  std::uint64_t start_time = 0;  // since boot, in clock ticks: with the pid, names the process
};
// A /proc/PID/stat line; nullopt when it is not one. The command name may hold spaces and
// parentheses: fields are counted after its last ')'.
std::optional<ProcessStat> parse_process_stat(std::string_view line);
// rchar + wchar of a /proc/PID/io text: every byte passed through read and write calls (files,
// pipes, sockets), 0 when absent.
std::int64_t parse_io_bytes(std::string_view text);
// The SigCgt mask of a /proc/PID/status text: bit N-1 set when signal N is caught.
std::uint64_t parse_caught_signals(std::string_view text);

struct ProcessSnapshot {
  pid_t pid = 0;
  ProcessStat stat;
  std::int64_t io_bytes = 0;
  std::string wchan;  // "" when running or unknown
  std::uint64_t caught_signals = 0;
  bool catches(int signal) const { return signal >= 1 && signal <= 64 && (caught_signals >> (signal - 1)) & 1; }
};
// Nullopt once the process is gone.
std::optional<ProcessSnapshot> snapshot_process(pid_t pid);
// The processes whose process group is one of `groups`.
std::vector<pid_t> processes_in_groups(const std::vector<pid_t>& groups);
// CPU clock ticks per second.
std::int64_t clock_ticks_per_second();

}  // namespace trainyard::agent
