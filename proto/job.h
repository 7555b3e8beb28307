#pragma once
// The job model of docs/DESIGN.md "Jobs and the job manager": the spec a user submits (validated strictly), the job as
// the daemon tracks it, and its attempts. JSON shapes here are the REST API's shapes.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "proto/job_array.h"
#include "proto/json_reader.h"
#include "proto/time.h"

namespace trainyard::inline proto {

using JobId = std::int64_t;
using AttemptId = std::int64_t;

enum class JobKind { command, simulated };
enum class Precision { fp32, bf16, bf16_sr };

struct CommandSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  // An absolute directory every rank starts in, as the job's account (sbatch --chdir; the CLI's
  // quick form sends the directory it was run from). None: the attempt's own directory.
  std::optional<std::string> workdir;
  // Processes started on each node, as `torchrun --nproc-per-node` or `srun --ntasks-per-node`:
  // each with its own RANK and LOCAL_RANK, one gang with the other nodes' (agent/command_run.h).
  int procs_per_node = 1;
  // A batch script's text (`trainyard submit train.sbatch`, as sbatch takes one): the agent writes
  // it into the attempt's directory and runs it in argv[0]'s place, by its own `#!` line.
  std::optional<std::string> script;
  // Files each writing rank's stdout and stderr are copied to as well (sbatch -o/-e), patterns of
  // proto/output_path.h; stderr goes to `output` unless `error` is given. None: the log only.
  std::optional<std::string> output;
  std::optional<std::string> error;
};
inline constexpr int kMaxProcsPerNode = 256;
inline constexpr std::size_t kMaxScriptBytes = 64 * 1024;
// What a batch script must begin with: the interpreter's line, as sbatch demands.
inline constexpr std::string_view kScriptStart = "#!";
inline constexpr std::size_t kMaxPathBytes = 4096;

// Settings of the simulated training kernel (neuron/). Ranges are checked at submission.
struct WorkloadSpec {
  int width = 64;           // hidden width of the student MLP
  int depth = 2;            // hidden layers
  int input_dim = 32;
  int output_dim = 8;
  int global_batch = 64;    // split across the data-parallel ranks
  std::int64_t steps = 200;
  double lr = 1e-3;
  double min_lr = 1e-4;
  std::int64_t warmup = 10;
  std::uint64_t seed = 1;
  Precision precision = Precision::fp32;
  std::int64_t checkpoint_every = 0;  // 0: no checkpoints
  int keep_checkpoints = 3;
  int step_ms = 0;                    // pacing: emulates a longer device step
  double spike_threshold = 1.0;       // grad-norm spike: above running mean + threshold

  bool operator==(const WorkloadSpec&) const = default;
};

enum class RetryAction { retry, exit };

// One `evaluate_on_exit` rule (AWS Batch's EvaluateOnExit): globs over the attempt's exit code,
// reason and failure class; every given glob must match; the first matching rule wins.
struct ExitRule {
  std::optional<std::string> on_exit_code;
  std::optional<std::string> on_reason;
  std::optional<std::string> on_class;
  RetryAction action = RetryAction::retry;
  bool operator==(const ExitRule&) const = default;
};

struct RetrySpec {
  int attempts = 1;  // 1..10, counting the first
  std::vector<ExitRule> evaluate_on_exit;
  bool operator==(const RetrySpec&) const = default;
};

// The largest storage quota a job or share may be given, in MiB (1 PiB): bounds the arithmetic.
inline constexpr std::int64_t kMaxStorageLimitMb = 1LL << 30;
// The largest memory limit a job may ask for per node, in MiB (16 TiB).
inline constexpr std::int64_t kMaxJobMemoryMb = 1LL << 24;

struct JobSpec {
  std::string name;
  std::string share = "default";
  int priority = 0;  // 0..9999, higher runs sooner within a share
  int nodes = 1;
  std::optional<int> nodes_min;       // allows resuming on fewer nodes
  std::optional<int> cores_per_node;  // nullopt: the whole node
  JobKind kind = JobKind::command;
  CommandSpec command;
  WorkloadSpec workload;
  RetrySpec retry;
  std::optional<std::int64_t> timeout_s;
  // Seconds without progress after which a rank is stuck. Unset: learned from the attempt's own
  // step intervals (daemon/policy/hang_rule.h).
  std::optional<std::int64_t> stuck_after_s;
  std::optional<bool> preflight;  // nullopt: on for multi-node jobs
  // Queue even when no registered nodes could hold the job yet (nodes to come); else it is refused.
  bool wait_for_capacity = false;
  std::map<std::string, std::string> labels;
  std::vector<Dependency> depends_on;
  std::optional<std::string> code_version;
  // A job array's spec text (job_array.h), checked at submit; each task carries it, not its indices.
  std::optional<std::string> array;
  bool hold = false;  // submitted held: queued but never scheduled until released
  // Checkpoint and log bytes the job may keep; over it, its oldest checkpoints are pruned.
  std::optional<std::int64_t> storage_limit_mb;
  // Memory each node's processes of an attempt may use together (RAM and swap); past it the
  // kernel's OOM killer stops them (the agent's cgroup, agent/attempt_cgroup.h). Unset: no limit.
  std::optional<std::int64_t> memory_mb;
  // A rank found straggling (daemon/policy/straggler_rule.h) has the attempt checkpointed and the job
  // queued again without that rank's node. Off: the straggler is only named, and its node checked.
  bool replace_stragglers = false;

  bool preflight_enabled() const { return preflight.value_or(nodes > 1); }
};

enum class JobState { pending, starting, running, succeeded, failed, cancelled };
// REQUEUED and PREEMPTED attempts were stopped to make way (on request, or for another share's
// job): neither is a failure, and neither uses one of the job's attempts.
enum class AttemptState { starting, running, succeeded, failed, cancelled, requeued, preempted };

// Who holds a pending job back from scheduling; an owner may not release an admin's hold.
enum class Hold { none, owner, admin };
// Why the daemon is stopping a running job that will queue again rather than end.
enum class StopIntent { none, requeue, preempt };

// What makes a job one task of an array: tasks of array A have ids A..A+count-1 in index order.
struct ArrayTask {
  JobId array_job = 0;
  int index = 0;
  int count = 0;
  std::optional<int> limit;  // %K: tasks of the array running at once
  bool operator==(const ArrayTask&) const = default;
};

// A rank whose device time per step ran at `ratio` times the median of its gang's other ranks for
// long enough to be named (daemon/policy/straggler_rule.h).
struct Straggler {
  int rank = 0;
  std::string node;
  double ratio = 0;
  TimePoint found_at{};
  bool operator==(const Straggler&) const = default;
};

struct Job {
  JobId id = 0;
  JobSpec spec;
  std::string user;
  JobState state = JobState::pending;
  TimePoint submitted_at{};
  std::optional<TimePoint> started_at;
  std::optional<TimePoint> ended_at;
  int attempts = 0;              // attempts created so far
  int infra_retries = 0;         // retries caused by infrastructure failures (not counted in attempts)
  int infra_retries_in_a_row = 0;  // of those, since an attempt last made training progress
  int requeues = 0;              // attempts stopped to queue again (requeue, preemption; not in attempts)
  std::string reason;            // why it is in its state (last failure, cancel, ...)
  std::optional<int> exit_code;  // of the last attempt
  std::string failure_class;     // of its newest attempt that ended; none once it succeeded
  std::string suggestion;        // what to do about that failure, from its class's rule; none with no class
  bool cancel_requested = false;
  std::vector<std::string> excluded_nodes;  // nodes that failed it; its next attempts avoid them
  std::optional<TimePoint> not_before;  // retry backoff: not placed before this time
  std::optional<ArrayTask> array_task;
  Hold held = Hold::none;
  StopIntent stopping_to = StopIntent::none;  // its running attempt is being stopped to queue again
};
// "12" or, for a task, "12_3".
std::string job_ref_text(const Job& job);

// What an attempt depended on (daemon/provenance.h): recorded at launch, amended once per rank at
// its start, then only read. Every state change copies the attempt into a store change, so the
// record is shared and immutable (a copy is a reference count), and its text is rendered once per
// version rather than at every write.
class AttemptProvenance {
 public:
  AttemptProvenance() = default;
  explicit AttemptProvenance(Json record);
  bool empty() const { return !version_; }
  const Json& json() const;         // null when none was recorded
  const std::string& text() const;  // json() as stored; rendered on first use, by whichever thread
  // A new version: `edit` changes a copy; the attempts already handed to the store keep theirs.
  template <class Edit>
  void amend(Edit&& edit) {
    Json record = json();
    edit(record);
    *this = AttemptProvenance(std::move(record));
  }

 private:
  struct Version {
    explicit Version(Json r) : record(std::move(r)) {}
    Json record;
    mutable std::once_flag rendered;
    mutable std::string text;
  };
  std::shared_ptr<const Version> version_;
};

// Checkpoint writes of one run that failed, in all, and the last one's error: a run that cannot
// checkpoint trains on, and a retry of it would start over.
struct CheckpointFailures {
  std::int64_t count = 0;
  std::string last_error;
  bool operator==(const CheckpointFailures&) const = default;
};
// Bytes of `last_error` a message may carry: a rank sends at most the last 1,024 bytes of its error,
// which grow at most threefold when invalid UTF-8 is replaced on the way (proto/text.h).
inline constexpr std::size_t kMaxCheckpointErrorLength = 4096;
Json to_json(const CheckpointFailures& f);
CheckpointFailures parse_checkpoint_failures(const Json& j, const std::string& path);  // count >= 1

struct Attempt {
  AttemptId id = 0;
  JobId job_id = 0;
  int number = 1;                  // 1-based within the job
  std::vector<std::string> nodes;  // rank r runs on nodes[r]
  int cores_per_node = 0;
  AttemptState state = AttemptState::starting;
  TimePoint created_at{};
  std::optional<TimePoint> launched_at;    // pre-flight over, ranks sent to their agents
  std::optional<TimePoint> started_at;
  std::optional<TimePoint> first_step_at;  // the first step this attempt completed
  std::optional<TimePoint> ended_at;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string failure_class;
  std::string reason;
  bool infrastructure = false;  // failure caused by the system, not the job
  std::optional<std::string> resumed_from;
  std::string diagnosis;                    // why it was stopped as stuck: ranks, steps, phases, logs
  // A failed attempt's first failed rank and its last output lines, quoted as people may read them
  // (daemon/base/quoted_output.h: masked, controls dropped, bounded); empty when no rank failed or it said nothing.
  std::optional<int> output_rank;
  std::string output;
  std::optional<TimePoint> stuck_detected_at;
  std::vector<Straggler> stragglers;  // in the order they were found
  std::int64_t steps_completed = 0;
  std::int64_t last_step = 0;
  std::optional<TimePoint> last_progress_at;
  std::int64_t checkpoint_ms = 0;  // training held up by checkpoint writes (rank 0 writes; all wait)
  CheckpointFailures checkpoint_failures;  // the most any rank reported (rank 0 writes)
  // Everything the attempt depended on; empty for attempts recorded before provenance existed.
  // Kept in the attempt's record; the attempt list leaves it out.
  AttemptProvenance provenance;
};

std::string to_string(JobKind k);
std::string to_string(Precision p);
std::string to_string(RetryAction a);
std::string to_string(JobState s);   // "PENDING", ...
std::string to_string(AttemptState s);
std::string to_string(Hold h);  // "", "owner", "admin"
std::string hold_reason(Hold h);  // a held job's pending reason: "held by its owner", "held by an admin"
std::string to_string(StopIntent i);  // "", "requeue", "preempt"
std::optional<JobState> parse_job_state(std::string_view s);  // case-insensitive
std::optional<AttemptState> parse_attempt_state(std::string_view s);
std::optional<Precision> parse_precision(std::string_view s);
bool is_terminal(JobState s);
bool is_terminal(AttemptState s);

// Strict parse of a submitted spec: throws InvalidInput naming the field.
// Submissions get the whole validation. Records stored by an older version are read with the rules
// they were written under (no name, label or NUL checks; `depends_on` kept), so a tightened rule
// never makes a stored job unreadable.
enum class SpecOrigin { submitted, stored };
// A command's fields (a job spec's "command", a launch's): what a submission may not carry is
// refused only when `origin` is `submitted`.
CommandSpec parse_command(const Json& j, SpecOrigin origin);
Json to_json(const CommandSpec& command);
JobSpec parse_job_spec(const Json& j, SpecOrigin origin = SpecOrigin::submitted);
WorkloadSpec parse_workload(const Json& j, const std::string& path);
Json to_json(const JobSpec& spec);
Json to_json(const WorkloadSpec& w);
Json to_json(const Job& job);
Json to_json(const Attempt& attempt);
// The stored record of an attempt: to_json's text, the provenance spliced in as already rendered.
std::string attempt_record(const Attempt& attempt);

// Lenient readers for our own stored or relayed documents (already validated when they entered).
Job job_from_json(const Json& j);
Attempt attempt_from_json(const Json& j);

}  // namespace trainyard::proto
