#pragma once
// The process groups of command jobs this agent started, recorded on disk so that an agent that
// was killed, and restarted, can kill what its previous life left running. Without it a job retried
// elsewhere after its node was lost could run twice: once on the new nodes and once, orphaned, here.
//
// One journal, `DIR/journal`, of lines "start <pgid> <attempt id> <start time>" and "end <pgid>":
// the start time (field 22 of /proc/PID/stat, clock ticks since boot) tells the recorded leader
// from an unrelated process that later got the same pid, which must never be killed. A file per
// group, made at its start and removed at its end, cost an inode allocated and freed per attempt;
// on ext4 without a journal every allocation then steps over each inode freed in the last 30 s,
// one buffer lookup each, which made the agents' kernel time per trivial job grow with the rate
// (bench/trivial_jobs/RESULTS.md "Fifth round"). Appending costs no inode; the journal is rewritten
// with only the live groups once it is mostly ended ones. Files of the old form (`DIR/<pgid>`
// holding "<attempt id> <start time>") are still read, so an upgraded agent kills what the previous version left. Not
// thread-safe; the agent's I/O thread owns it.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <string>

namespace trainyard::agent {

struct RecordedGroup {
  std::int64_t attempt_id = 0;
  std::uint64_t start_time = 0;
};

// Parses "<attempt id> <start time>" (an old-form file's text, a start line's tail); nullopt when it
// is anything else.
std::optional<RecordedGroup> parse_recorded_group(const std::string& text);

// The start time of a live process from /proc/PID/stat; nullopt when there is no such process.
std::optional<std::uint64_t> process_start_time(pid_t pid);

// Sends `signal` (0: none, only asks) to every group the journal in `dir` holds that is still
// ours and has members, touching no record: for the fence keeper (agent/fence_keeper.h), beside an
// agent that owns the journal. Returns how many groups that was.
int signal_recorded_groups(const std::string& dir, int signal);
// How many processes of those groups still run. A zombie does not: once the agent is dead its
// killed children are orphans, and where nobody reaps orphans (a container's first process may
// not) they stay zombies, which a signal still reaches.
int running_in_recorded_groups(const std::string& dir);

class ProcessRegistry {
 public:
  // Reads what the journal holds (a previous life's groups too), so that rewriting it keeps them.
  explicit ProcessRegistry(std::string dir);

  void record(pid_t pgid, std::int64_t attempt_id);
  void forget(pid_t pgid);
  // SIGKILLs every recorded group that still has members, unless its pid now leads an unrelated
  // process (another start time); removes all records; returns how many groups were signalled.
  // A dead leader's members are still ours: the kernel reuses no pid that is some group's id.
  // Corrupt records are logged and removed.
  int kill_leftovers();

 private:
  void append(const std::string& line);
  void rewrite_journal();

  std::string dir_;
  std::string journal_path_;
  std::ofstream journal_;                   // appending; opened by the first record
  std::map<pid_t, RecordedGroup> live_;     // started and not yet ended, as the journal says
  std::size_t journal_lines_ = 0;
};

}  // namespace trainyard::agent
