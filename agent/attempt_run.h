#pragma once
// One rank of an attempt running on this node, whatever its kind. The agent owns runs; a run
// reports its exit exactly once through the callback it was started with, on the I/O thread.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/faults.h"
#include "proto/messages.h"

namespace trainyard::agent {

struct AttemptExit {
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string reason;
  std::int64_t steps = 0;
  std::string log_tail;
  Json user_facts;  // agent/provenance_file.h
  std::string user_facts_error;
  std::optional<int> peer_closed_rank;  // a collective failed as this rank's data-plane connection closed
};

using ExitCallback = std::function<void(AttemptExit)>;
// Hands work to the I/O thread (runs finish on their own threads).
using PostToIo = std::function<void(std::function<void()>)>;

class AttemptRun {
 public:
  virtual ~AttemptRun() = default;
  // Asks the run to stop politely (SIGTERM, or the kernel's stop flag); `reason` becomes the exit
  // reason. The agent calls `kill` if it has not exited after the grace period.
  virtual void terminate(const std::string& reason) = 0;
  virtual void kill() = 0;
  // Asks the run to save its work and stop, because it will be queued again (requeue, preemption):
  // the training kernel checkpoints the step it stopped at; a command gets SIGUSR1 and is expected
  // to checkpoint and exit by itself. The agent terminates it if it has not exited after the grace.
  virtual void save_then_stop(const std::string& reason) = 0;
  // Progress for the heartbeat (I/O thread).
  virtual AttemptReport report() = 0;
  // Per-step metrics completed since the last call, oldest first (I/O thread). Only runs that
  // measure training steps have any.
  virtual std::vector<StepMetric> take_metrics() { return {}; }
  // Checkpoints published since the last call, oldest first (I/O thread): the training kernel's,
  // or the step directories a command's rank 0 wrote (agent/command_checkpoints.h).
  virtual std::vector<CheckpointReport> take_checkpoints() { return {}; }
  // The node's injected faults changed (I/O thread): a run on a simulated device of its own
  // applies them there.
  virtual void faults_changed(const FaultPlan&) {}
  // The environment given to the run's process, secret-looking values masked (provenance). Only
  // command runs have one: a simulated rank's process gets nothing of the job's.
  virtual std::map<std::string, std::string> environment() const { return {}; }
};

struct LogTail {
  std::string text;
  bool readable = false;   // a regular file that could be opened
  std::int64_t log_bytes = 0;  // the whole log's size
  bool truncated = false;  // `text` is less than the whole log
};

// The last whole lines of a log file within `max_bytes`, at most `max_lines` of them (0: no line
// limit), a line longer than 16 KiB shown by its first and last 2 KiB around a note of what was
// left out (so one huge line cannot hide the lines before it); when not even the last line fits,
// its last `max_bytes` on a whole UTF-8 character. Looks at most 64 MiB back. Never follows a link
// and never blocks: anything but a regular file reads as not readable.
LogTail read_log_tail(const std::string& path, std::int64_t max_bytes, std::int64_t max_lines = 0);

// What an exit report carries of the log, for diagnosis and failure classification.
inline constexpr std::int64_t kExitTailBytes = 4096;
std::string read_exit_tail(const std::string& path);

}  // namespace trainyard::agent
