#pragma once
// Signs of life of a command rank that need nothing from the job (docs/DESIGN.md "Liveness and
// stuck attempts"): the agent looks at the rank at every heartbeat and reports how long it has been
// idle, and, once idle a while, where each of its processes is. The daemon judges (daemon/policy/hang_rule.h).
//
// A look finds the rank active when, since the previous look, its log grew, one of its processes
// did I/O (read or write calls: files, pipes, sockets) or started, or when over the last
// kCpuWindow its processes together used CPU for at least kBusyShare of the time (a waiting
// PyTorch process's background threads use about 0.5 %, a clock tick every two seconds: judged
// look by look at a 100 ms heartbeat, every tick would look like work). A data loader, a compiler, an evaluation or a checkpoint
// write is active; a rank blocked in a collective waiting for a peer, asleep or stopped is not.
// A rank that spins its CPU while hung (a busy-polling collective) looks active: only its progress
// reports or its time limit find it.
//
// Once idle for kStacksAfterIdle, the agent asks each of the rank's processes for its Python stacks,
// once an idle spell: it sends TRAINYARD_STACKS_SIGNAL to those that catch it (the jobs'
// sitecustomize registers faulthandler for it, agent/job_python.h), and never to one that does not
// (that signal would end it). A stopped process is left as it is, and said to be stopped.
#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/messages.h"
#include "proto/time.h"

namespace trainyard::agent {

// The signal that asks a job's Python process for its stacks: a real-time one, which nothing in
// Python or PyTorch uses.
int stacks_signal();

// CPU time, as a share of one CPU over the time between two looks, that counts as work.
inline constexpr double kBusyShare = 0.05;
inline constexpr Millis kCpuWindow{5'000};
inline constexpr Millis kStacksAfterIdle{10'000};
// A stacks file past this size is not added to: a job that idles often has said enough.
inline constexpr std::int64_t kMaxStacksFileBytes = 1 << 20;

struct ProcessUsage {
  pid_t pid = 0;
  std::uint64_t start_time = 0;  // with the pid, names the process
  std::int64_t cpu_ms = 0;
  std::int64_t io_bytes = 0;
};

// Pure: looks in, idle time out.
class ActivityMeter {
 public:
  // A look at `at`: the rank's processes, its log's size, and the bytes the agent itself made its
  // processes write (their stack dumps), which are not the job's work. True when active.
  bool look(MonoTime at, const std::vector<ProcessUsage>& processes, std::int64_t log_bytes, std::int64_t own_bytes);
  // Since the last look that found the rank active (the first look counts as one).
  Millis idle(MonoTime now) const;

 private:
  // Whether output, I/O or a new process shows activity; sets `cpu_ms` to the CPU used since the last look.
  bool active_since_last(const std::vector<ProcessUsage>& processes, std::int64_t log_bytes, std::int64_t own_bytes,
                         std::int64_t& cpu_ms) const;

  struct CpuMark {
    MonoTime at;
    std::int64_t used_ms = 0;  // CPU used by the rank since the first look, as of `at`
  };
  bool busy(MonoTime at, std::int64_t cpu_ms);

  std::optional<MonoTime> last_look_;
  MonoTime active_at_{};
  std::deque<CpuMark> cpu_marks_;  // the looks within the last kCpuWindow, and the one before
  std::map<pid_t, ProcessUsage> processes_;
  std::int64_t log_bytes_ = 0;
  std::int64_t own_bytes_ = 0;
};

// One process the agent started for the rank: where its stack dumps go.
struct RankLeader {
  pid_t pid = -1;  // -1 once reaped
  int rank = 0;    // its RANK
  std::string stacks_file;
};

// The agent's watch over one command rank: looks, asks for stacks, says where its processes are.
class RankActivity {
 public:
  explicit RankActivity(int stacks_signal) : stacks_signal_(stacks_signal) {}
  // Looks at the rank now: `processes` are all of its processes (the leaders and what they started).
  // Fills `report`'s idle_ms and, once idle kStacksAfterIdle, its where.
  void look(MonoTime now, const std::vector<pid_t>& processes, const std::vector<RankLeader>& leaders,
            std::int64_t log_bytes, AttemptReport& report);

 private:
  void ask_for_stacks(const std::vector<RankLeader>& leaders);
  std::vector<ProcessWhere> where(const std::vector<RankLeader>& leaders) const;

  int stacks_signal_;
  ActivityMeter meter_;
  // Per stacks file: its size when the agent last asked, so that only that dump is read.
  std::map<std::string, std::int64_t> dump_offsets_;
  bool asked_this_spell_ = false;
};

}  // namespace trainyard::agent
