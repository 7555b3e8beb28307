#pragma once
// What the daemon tells the scheduler and what the scheduler answers (see scheduler.h for the
// policy). Plain values; node and share names are the daemon's names.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/job.h"
#include "proto/node.h"
#include "proto/time.h"

namespace trainyard::scheduler {

struct Config {
  std::string system_share = "system";                         // canaries: goes first when its job fits
  Millis usage_half_life = std::chrono::hours(24 * 7);         // decay of charged core-seconds
  Millis default_horizon = std::chrono::hours(1);              // expected run time when no timeout_s
  std::string placement_label = "rack";                        // multi-node jobs prefer one value of it
  double compute_reservation = 0.0;                            // fraction of cores kept for idle shares
  int max_jobs_examined = 1000;                                // per pass, as Slurm's default_queue_depth
};
// Throws InvalidInput naming the offending field (the config comes from a file or flags).
void validate(const Config& config);

struct ShareSettings {
  double weight = 1.0;                       // > 0
  std::optional<int> max_running_cores;      // cap; nullopt: none
  // Checkpoint and log MiB its jobs may keep together; the daemon prunes over it, placement ignores it.
  std::optional<std::int64_t> storage_limit_mb;
};
// Throws InvalidInput("weight" / "max_running_cores") for values an admin must not set.
void validate(const ShareSettings& settings);

struct NodeInfo {
  std::string name;
  int cores = 0;
  std::map<std::string, std::string> labels;
  bool accepts_work = true;  // HEALTHY and connected
  std::int64_t memory_mb = 0;  // 0: not reported, so any demand fits
};
NodeInfo node_info(const Node& node);  // accepts work iff HEALTHY and connected

// A task of a job array with a %K limit: at most `limit` tasks of `array_job` are let into the
// queue or run at once; the rest wait, in job order, held like a dependency.
struct ArrayLimit {
  JobId array_job = 0;
  int limit = 1;
};

struct PendingJob {
  JobId id = 0;
  std::string share = "default";
  int priority = 0;
  TimePoint submitted_at{};
  int nodes = 1;
  std::optional<int> cores_per_node;  // nullopt: whole nodes
  std::int64_t memory_mb = 0;         // per rank (proto/workload_memory.h rank_memory_mb); 0: none asked
  std::optional<std::int64_t> timeout_s;
  std::vector<JobId> waiting_for;        // dependencies not yet met
  std::string dependency_reason;         // the sentence for them (scheduler/dependencies.h)
  std::optional<ArrayLimit> array;
  std::optional<TimePoint> not_before;   // retry backoff
  std::vector<std::string> excluded_nodes;  // nodes that failed this job before
};
// Everything but `waiting_for` and `excluded_nodes`, which the daemon knows from other records.
PendingJob pending_job(const Job& job);
std::optional<ArrayLimit> array_limit(const Job& job);  // its array's %K, if it is a task of one

struct NodeCores {
  std::string node;
  int cores = 0;
  bool operator==(const NodeCores&) const = default;
};

// Work holding cores: an attempt in STARTING or RUNNING. One per job at a time.
struct RunningJob {
  JobId id = 0;
  std::string share = "default";
  std::vector<NodeCores> nodes;
  TimePoint started_at{};
  std::optional<std::int64_t> timeout_s;
  std::optional<ArrayLimit> array;
  std::int64_t memory_mb = 0;  // held on each of its nodes
};

struct Start {
  JobId job = 0;
  std::vector<NodeCores> nodes;  // rank r on nodes[r]
};

// The blocked top job's promise: it starts on `nodes` by `at` at the latest, if running work
// ends no later than its timeout says.
struct Reservation {
  JobId job = 0;
  TimePoint at{};
  std::vector<NodeCores> nodes;
};

struct PassResult {
  std::vector<Start> starts;  // already committed: the jobs now hold their cores
  std::optional<Reservation> reservation;
  int examined = 0;  // jobs looked at; the rest get their reasons on demand
  bool hit_limit = false;  // stopped at max_jobs_examined with room left: pass again soon
};

enum class ReasonCode {
  resources,            // not enough free cores on accepting nodes now
  nodes_unavailable,    // fewer nodes in service than it needs could hold it even idle: it waits for nodes to return
  priority,             // would fit, but jobs ahead of it come first
  reservation,          // would fit, but would delay the reserved job
  share_cap,            // the share's cap on running cores is reached
  compute_reservation,  // cores held back for shares with no running work
  dependency,           // waiting for jobs it depends on
  backoff,              // retry backoff not over
  array_limit,          // its array's %K tasks are already queued or running
};
std::string to_string(ReasonCode code);

struct PendingReason {
  ReasonCode code = ReasonCode::resources;
  std::string message;
};

struct ShareRow {
  std::string name;
  double weight = 1.0;
  std::optional<int> max_running_cores;
  double usage = 0;           // decayed core-seconds charged so far
  double expected_usage = 0;  // core-seconds charged in advance for running work
  double normalized_usage = 0;  // (usage + expected) over all shares' (usage + expected)
  double fair_share_factor = 1;
  int running_cores = 0;
  int pending_jobs = 0;
};

// A share's decayed usage as of `at`, for persistence across restarts.
struct UsageRecord {
  std::string share;
  double usage = 0;
  TimePoint at{};
};

}  // namespace trainyard::scheduler
