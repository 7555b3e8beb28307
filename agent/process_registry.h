#pragma once
// The process groups of command jobs this agent started, recorded on disk so that an agent that
// was killed, and restarted, can kill what its previous life left running. Without it a job retried
// elsewhere after its node was lost could run twice: once on the new nodes and once, orphaned, here.
//
// One file per group, `DIR/<pgid>`, holding "<attempt id> <start time>": the start time (field 22
// of /proc/PID/stat, clock ticks since boot) tells the recorded leader from an unrelated process
// that later got the same pid, which must never be killed. Files are written when a group starts
// and removed once it is gone. Not thread-safe; the agent's I/O thread owns it.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace trainyard::agent {

struct RecordedGroup {
  std::int64_t attempt_id = 0;
  std::uint64_t start_time = 0;
};

// Parses a record file's text; nullopt when it is not "<attempt id> <start time>".
std::optional<RecordedGroup> parse_recorded_group(const std::string& text);

// The start time of a live process from /proc/PID/stat; nullopt when there is no such process.
std::optional<std::uint64_t> process_start_time(pid_t pid);

class ProcessRegistry {
 public:
  explicit ProcessRegistry(std::string dir);

  void record(pid_t pgid, std::int64_t attempt_id);
  void forget(pid_t pgid);
  // SIGKILLs every recorded group that still has members, unless its pid now leads an unrelated
  // process (another start time); removes all records; returns how many groups were signalled.
  // A dead leader's members are still ours: the kernel reuses no pid that is some group's id.
  // Corrupt records are logged and removed.
  int kill_leftovers();

 private:
  std::string dir_;
};

}  // namespace trainyard::agent
