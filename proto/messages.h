#pragma once
// The daemon <-> agent protocol: one JSON object per WebSocket text frame, with a "type" field.
// Both sides parse strictly (unknown fields and bad types are refused with the field named), and
// every attempt-scoped message carries the attempt id so stale attempts can be fenced.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "proto/job.h"
#include "proto/metrics.h"

namespace trainyard {

// Bumped on any incompatible change; the daemon refuses a hello with another version.
// 2: metrics, faults and set_faults messages; hello lists the node's injected faults.
inline constexpr int kProtocolVersion = 2;

// The agent's view of one attempt it is running.
struct AttemptReport {
  AttemptId attempt_id = 0;
  JobId job_id = 0;
  std::int64_t step = 0;                       // last training step reached
  std::optional<TimePoint> last_progress_at;   // when `step` last advanced
  std::string phase;                           // e.g. "forward", "all-reduce", "checkpoint"
  bool operator==(const AttemptReport&) const = default;
};

// agent -> daemon
struct HelloMsg {
  int protocol = kProtocolVersion;
  std::string agent_version;
  std::string name;
  int cores = 0;
  std::int64_t memory_mb = 0;
  std::map<std::string, std::string> labels;
  std::string data_addr;
  std::vector<AttemptReport> attempts;  // attempts still running from before a reconnect
  std::vector<std::string> faults;      // injected faults, as "--fault" specs (agent/neuron/faults.h)
};
struct HeartbeatMsg {
  std::vector<AttemptReport> attempts;
};
struct AttemptStartedMsg {
  AttemptId attempt_id = 0;
};
struct AttemptExitedMsg {
  AttemptId attempt_id = 0;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string reason;
  std::int64_t steps = 0;
  std::string log_tail;  // last lines of the attempt's output, for diagnosis and classification
};
// Steps an attempt's rank 0 completed since its last metrics message, oldest first.
struct MetricsMsg {
  AttemptId attempt_id = 0;
  std::vector<StepMetric> steps;
};
// The node's injected faults after a change (answers set_faults; the daemon lists them on the node).
struct FaultsMsg {
  std::vector<std::string> faults;
};
struct LogReplyMsg {
  std::int64_t request_id = 0;
  AttemptId attempt_id = 0;
  std::string text;
  std::string error;  // non-empty when the log could not be read
};

// daemon -> agent
struct WelcomeMsg {
  std::string daemon_version;
  int heartbeat_interval_ms = 5000;
};
struct RefusedMsg {
  std::string reason;
};
struct LaunchMsg {
  AttemptId attempt_id = 0;
  JobId job_id = 0;
  int attempt_number = 1;
  JobKind kind = JobKind::command;
  CommandSpec command;
  WorkloadSpec workload;
  int rank = 0;
  int world_size = 1;
  int cores = 1;
  std::vector<std::string> peers;  // data-plane address of each rank, indexed by rank
  std::string master_addr;
  int master_port = 0;
  std::string checkpoint_dir;
  std::optional<std::string> resume_from;
};
struct KillMsg {
  AttemptId attempt_id = 0;
  std::string reason;
  int grace_ms = 10000;
};
struct LogRequestMsg {
  std::int64_t request_id = 0;
  AttemptId attempt_id = 0;
  std::int64_t tail_bytes = 64 * 1024;
};

// Replaces the node's whole fault plan (an empty list clears it). The daemon validated the specs.
struct SetFaultsMsg {
  std::vector<std::string> faults;
};

using AgentMessage =
    std::variant<HelloMsg, HeartbeatMsg, AttemptStartedMsg, AttemptExitedMsg, LogReplyMsg, MetricsMsg, FaultsMsg>;
using DaemonMessage = std::variant<WelcomeMsg, RefusedMsg, LaunchMsg, KillMsg, LogRequestMsg, SetFaultsMsg>;

std::string encode(const AgentMessage& m);
std::string encode(const DaemonMessage& m);
// Strict parsers: throw InvalidInput naming the field for anything malformed.
AgentMessage parse_agent_message(std::string_view text);
DaemonMessage parse_daemon_message(std::string_view text);

}  // namespace trainyard
