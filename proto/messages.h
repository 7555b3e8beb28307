#pragma once
// The daemon <-> agent protocol: one JSON object per WebSocket text frame, with a "type" field.
// Both sides parse strictly (unknown fields and bad types are refused with the field named), and
// every attempt-scoped message carries the attempt id so stale attempts can be fenced.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "proto/ipv4_network.h"
#include "proto/job.h"
#include "proto/metrics.h"
#include "proto/node.h"

namespace trainyard::inline proto {

// Bumped on any incompatible change; the daemon refuses a hello with another version.
// 2: metrics, faults and set_faults messages; hello lists the node's injected faults;
//    health_check and health_result.
// 5: welcome carries the node's own credential on its first join; launch and collective health
//    checks carry the data-plane secret that authenticates the ranks' connections.
// 6: metrics carry the checkpoints rank 0 published.
// 7: launch carries the submitting Trainyard user (the agent maps it to the job's Unix account).
// 8: attempt_started carries the (masked) environment of a command rank; attempt_exited the facts
//    the job wrote to $TRAINYARD_PROVENANCE_FILE, or why they were refused (provenance).
// 9: kill may ask the attempt to checkpoint before it stops (requeue and preemption); launch
//    carries the grace a command gets to do so.
// 10: heartbeats carry the node's free disk space, and each attempt report its log bytes.
// 11: attempt_exited names the peer rank whose data-plane connection closed under a collective.
// 12: hello says how the agent contains attempts (cgroups); launch carries the job's memory_mb.
// 13: heartbeats are numbered and the daemon acknowledges each (heartbeat_ack); welcome carries the
//     fence time: an agent with no heartbeat acknowledged for it stops its attempts.
// 14: metrics carry the step directories a command's rank 0 wrote (no digest without a manifest).
// 15: a simulated rank's attempt report carries its device time (busy_ms), to find stragglers.
// 16: the accelerator suite times each core's GEMM (timing_repeats, gemm_ms), to find a slow core.
// 17: attempt reports and attempt_exited carry the run's failed checkpoint writes (checkpoint_failures).
// 18: launch's command carries the job's working directory (workdir) and its processes per node.
// 19: a command rank's attempt report says how long its processes have been idle (idle_ms) and,
//     once idle a while, where each process was (where: state, kernel wait, Python stack).
// 20: a dead agent's fence keeper reports the attempts it stopped (attempts_stopped, the first and
//     only message of its connection); the daemon answers stop_noted.
// 21: welcome names the cluster (its database's own name), which the agent's attempt directories
//     and per-job uids are made from.
// 22: a collective health result counts the connections the rank's data-plane port refused while
//     the suite ran (refused_connections): a transport failure beside them judges no node.
// 23: hello says whether the agent can give attempts their own network (job_network); launch may
//     carry the attempt's network (pool, block, each rank's address).
// 24: launch's command may carry a batch script (script), run in argv[0]'s place.
// 25: launch's command may name files its output is copied to (output, error: sbatch -o/-e), and
//     launch carries the job's name (job_name) and the rank's node (node) for their %x and %N.
inline constexpr int kProtocolVersion = 25;

// The most ranks one gang may have, an attempt's or a health check's collective suite: ranks run
// from 0 to kMaxRanks - 1, and a message names at most kMaxRanks peers, each an address of at most
// kMaxPeerAddressChars. The parsers below refuse anything past these; the daemon checks what it
// builds against them before sending (bounds_error), so no agent ever has to refuse its daemon.
inline constexpr int kMaxRanks = 1024;
inline constexpr std::size_t kMaxPeerAddressChars = 256;

// Where one process of a command rank was once the rank had been idle a while (agent/rank_activity.h).
struct ProcessWhere {
  int rank = 0;       // its RANK
  int pid = 0;
  std::string state;  // as /proc/PID/stat says: "R", "S", "D", "T" (stopped), "t" (traced), "Z"
  std::string wchan;  // the kernel function it sleeps in, when the kernel says
  // Its main thread's Python stack, most recent call first, one "file:line in function" per line,
  // from the dump the agent asked for; empty when it could not dump one (not Python, stopped).
  std::string stack;
  bool operator==(const ProcessWhere&) const = default;
};
inline constexpr std::size_t kMaxStackChars = 4096;

// The agent's view of one attempt it is running.
struct AttemptReport {
  AttemptId attempt_id = 0;
  JobId job_id = 0;
  std::int64_t step = 0;                       // last training step reached
  std::optional<TimePoint> last_progress_at;   // when `step` last advanced
  std::string phase;                           // e.g. "forward", "all-reduce", "checkpoint"
  std::optional<TimePoint> first_step_at;      // when this run completed its first step (goodput)
  std::int64_t checkpoint_ms = 0;              // how long checkpoint writes held up training, in all
  CheckpointFailures checkpoint_failures;
  // A simulated rank's device time over the steps of this run (neuron::StepMetrics::busy_ms) as of
  // `step`; none for a command rank, whose step times are all the daemon can compare.
  std::optional<std::int64_t> busy_ms;
  std::int64_t log_bytes = 0;                  // this rank's log file (storage accounting)
  std::int64_t work_bytes = 0;                 // the attempt's work directory besides its logs (storage accounting)
  // A command rank's: how long none of its processes wrote output, used CPU or did I/O, as the
  // agent measured it; none for a simulated rank, whose steps say it all.
  std::optional<std::int64_t> idle_ms;
  std::vector<ProcessWhere> where;  // its processes, once idle a while; empty otherwise
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
  std::vector<std::string> faults;      // injected faults, as "--fault" specs (proto/faults.h)
  std::string cgroups;  // "v1", "v2" or "unavailable: <why>" (agent/attempt_cgroup.h)
  // "netns" when the agent can give attempts a network of their own, else "unavailable: <why>"
  // (agent/job_network.h); empty from an agent that does not say.
  std::string job_network;
};
inline constexpr const char* kJobNetworkSupported = "netns";  // HelloMsg::job_network of an agent that can
struct HeartbeatMsg {
  std::int64_t seq = 0;  // numbers the agent's heartbeats on one link; the daemon's ack echoes it
  std::vector<AttemptReport> attempts;
  std::vector<DiskSpace> disks;  // the work and checkpoint filesystems (health: free space)
};
struct AttemptStartedMsg {
  AttemptId attempt_id = 0;
  // A command rank's environment with secret-looking values masked (proto/provenance.h).
  std::map<std::string, std::string> environment;
};
struct AttemptExitedMsg {
  AttemptId attempt_id = 0;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string reason;
  std::int64_t steps = 0;
  std::string log_tail;  // last lines of the attempt's output, for diagnosis and classification
  // As in AttemptReport: a run shorter than a heartbeat reports them only here.
  std::optional<TimePoint> first_step_at;
  std::int64_t checkpoint_ms = 0;
  CheckpointFailures checkpoint_failures;
  // What the job wrote to $TRAINYARD_PROVENANCE_FILE (an object, proto/provenance.h), null when it
  // wrote nothing or the file was refused; then `user_facts_error` says why.
  Json user_facts;
  std::string user_facts_error;
  // The rank whose data-plane connection closed under one of this rank's collectives: the kernel
  // closes a dead process's sockets at once, so the daemon need not wait out a grace to know.
  std::optional<int> peer_closed_rank;
};
// A checkpoint an attempt's rank 0 published: its step and the hex SHA-256 of its manifest.json,
// which the daemon records so a retry resumes only from checkpoints the job itself wrote. A
// command's step directory in its own format has no manifest, and an empty digest.
struct CheckpointReport {
  std::int64_t step = 0;
  std::string manifest_sha256;
  bool operator==(const CheckpointReport&) const = default;
};
// Steps an attempt's rank 0 completed, and checkpoints it published, since its last metrics
// message, oldest first; at most kMaxCheckpointReports checkpoints.
inline constexpr std::size_t kMaxCheckpointReports = 1000;
struct MetricsMsg {
  AttemptId attempt_id = 0;
  std::vector<StepMetric> steps;
  std::vector<CheckpointReport> checkpoints;
};
// The node's injected faults after a change (answers set_faults; the daemon lists them on the node).
struct FaultsMsg {
  std::vector<std::string> faults;
};
// One node's part of a health check: one suite. Options and results are the health library's JSON
// (healthcheck/health_json.h), validated strictly by the side that reads them, which proto cannot
// (it sits below the health library).
enum class HealthSuite { accelerator, collective };
std::string to_string(HealthSuite s);
std::optional<HealthSuite> parse_health_suite(std::string_view s);

// The error of an accelerator suite asked of a node whose cores are in use: not tested, not failed.
inline constexpr std::string_view kNodeBusyForHealthCheck = "node is busy: the accelerator suite needs idle cores";

struct HealthResultMsg {
  std::int64_t task_id = 0;
  Json result;        // AcceleratorReport or RankCollectiveResult; null when `error` is set
  std::string error;  // the suite could not run at all (busy node, bad options)
};
// From the fence keeper (agent/fence_keeper.h), not the agent: the node's agent died, and every
// process of these attempts is gone (their cgroups removed). Sent with the node's own credential
// as the first and only message of a connection; the daemon answers stop_noted or refused.
inline constexpr std::size_t kMaxStoppedAttempts = 4096;
struct AttemptsStoppedMsg {
  int protocol = kProtocolVersion;
  std::string node;
  std::vector<AttemptId> attempts;  // not empty, at most kMaxStoppedAttempts
};
struct LogReplyMsg {
  std::int64_t request_id = 0;
  AttemptId attempt_id = 0;
  std::string text;
  std::string error;  // non-empty when the log could not be read
  std::int64_t log_bytes = 0;  // the whole log's size
  bool truncated = false;      // `text` is only the end of the log
};

// daemon -> agent
struct WelcomeMsg {
  std::string daemon_version;
  int heartbeat_interval_ms = 5000;
  // Sent once, when a node name first joins with the join token: the node's own bearer secret,
  // which the agent keeps and presents from then on (the join token no longer admits this name).
  std::string node_credential;
  // An agent none of whose heartbeats the daemon acknowledged for this long stops its attempts
  // (daemon/policy/fence_timing.h); 0: it never does.
  int fence_after_ms = 0;
  // The cluster's name (store::Store::cluster_name): lowercase hex, at most kMaxClusterNameChars;
  // empty for a cluster whose jobs had directories and uids before names were made.
  std::string cluster;
};
inline constexpr std::size_t kMaxClusterNameChars = 32;
// Lowercase hex digits, at most kMaxClusterNameChars: safe in a path and a log line.
bool valid_cluster_name(std::string_view name);
// The daemon heard heartbeat `seq`: the agent is not cut off.
struct HeartbeatAckMsg {
  std::int64_t seq = 0;
};
struct RefusedMsg {
  std::string reason;
};
// The daemon took an attempts_stopped report: the attempts' ranks on the node are lost, so their
// replacements may start.
struct StopNotedMsg {};
// The network of its own an attempt's command ranks get (agent/job_network.h, daemon/policy/job_address_pool.h).
struct JobNetworkPlan {
  Ipv4Network pool;             // where every attempt's addresses come from: only an attempt's own ranks reach them
  Ipv4Network block;            // this attempt's, inside `pool`
  std::vector<Ipv4> addresses;  // rank r's, inside `block`, one per rank
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
  std::string user;  // the Trainyard user who submitted the job (agent --user-map)
  std::string job_name;
  std::string node;  // the name of the node this rank runs on
  // Authenticates the ranks' data-plane connections to each other (neuron/data_plane.h).
  // Never given to the job's processes, never logged.
  std::string data_plane_secret;
  // How long a command has after SIGUSR1 to checkpoint and exit (TRAINYARD_PREEMPT_GRACE_S).
  int preempt_grace_ms = 10000;
  std::int64_t memory_mb = 0;  // the job's memory_mb; 0: no limit
  // Set: the ranks run in a network of their own, and master_addr is rank 0's address in it.
  std::optional<JobNetworkPlan> job_network;
};
struct KillMsg {
  AttemptId attempt_id = 0;
  std::string reason;
  int grace_ms = 10000;
  // Save the work first (docs/DESIGN.md "Hold, release, requeue, update and preemption"): a simulated rank 0
  // writes a checkpoint of the step it stopped at; a command gets SIGUSR1 and grace_ms to write its own before SIGTERM.
  bool checkpoint = false;
};
// At most this much of one rank's log crosses the link in one reply: escaped as \u00XX, every byte
// may become 6, so the daemon's WebSocket message limit is at least 7 MiB (--max-ws-message-bytes).
inline constexpr std::int64_t kMaxLogReplyBytes = 1 << 20;
inline constexpr std::int64_t kMaxLogLines = 100000;
struct LogRequestMsg {
  std::int64_t request_id = 0;
  AttemptId attempt_id = 0;
  std::int64_t tail_lines = 1000;
  std::int64_t max_bytes = kMaxLogReplyBytes;
};

struct HealthCheckMsg {
  std::int64_t task_id = 0;
  HealthSuite suite = HealthSuite::accelerator;
  Json options;  // AcceleratorSuiteOptions or CollectiveSuiteOptions
  // Collective only: this node's rank among `peers` (data-plane addresses by rank), and the
  // data-plane session the ranks meet in (distinct from every attempt id).
  int rank = 0;
  std::vector<std::string> peers;
  std::int64_t session = 0;
  std::string session_secret;  // collective only: as LaunchMsg::data_plane_secret, for the session
};
// Replaces the node's whole fault plan (an empty list clears it). The daemon validated the specs.
struct SetFaultsMsg {
  std::vector<std::string> faults;
};

using AgentMessage = std::variant<HelloMsg, HeartbeatMsg, AttemptStartedMsg, AttemptExitedMsg, LogReplyMsg, MetricsMsg,
                                  FaultsMsg, HealthResultMsg, AttemptsStoppedMsg>;
using DaemonMessage = std::variant<WelcomeMsg, RefusedMsg, LaunchMsg, KillMsg, LogRequestMsg, SetFaultsMsg, HealthCheckMsg,
                                   HeartbeatAckMsg, StopNotedMsg>;

std::string encode(const AgentMessage& m);
std::string encode(const DaemonMessage& m);
// Strict parsers: throw InvalidInput naming the field for anything malformed.
AgentMessage parse_agent_message(std::string_view text);
DaemonMessage parse_daemon_message(std::string_view text);

// Why the agent's parser would refuse `m` for its ranks, world size or peers (the bounds above),
// naming the field as the parser does; empty when it keeps them. Cheap: no encoding.
std::string bounds_error(const DaemonMessage& m);

}  // namespace trainyard::proto
