#include "daemon/api/schemas.h"
#include "daemon/base/prometheus.h"

namespace trainyard::daemon {
namespace {

// Schemas are written as JSON text: they read as the documents they describe.
const char* const kJsonSchemas = R"json({
  "Error": {
    "type": "object", "required": ["error"],
    "properties": {"error": {"type": "object", "required": ["code", "message"], "properties": {
      "code": {"type": "string", "description": "stable: invalid_field, invalid_json, invalid_query, invalid_id, unauthorized, forbidden, not_found, method_not_allowed, conflict, rate_limited, too_many_pending, unavailable, internal"},
      "message": {"type": "string"},
      "field": {"type": "string", "description": "the field, query parameter or path part that was wrong"}}}}
  },
  "Healthz": {"type": "object", "required": ["status", "version", "role", "epoch", "active_url"],
              "properties": {"status": {"enum": ["ok", "degraded"]}, "version": {"type": "string"},
                             "role": {"enum": ["active", "standby"]}, "epoch": {"type": "integer"},
                             "active_url": {"type": "string"},
                             "store": {"type": "string", "description": "degraded: why the store looks unreachable (no lease renewal confirmed) and when the lease runs out, or since when and why its writes fail"}}},
  "OpenApiDocument": {"type": "object", "description": "this document"},
  "ClusterStatus": {"type": "object", "additionalProperties": false, "properties": {
    "store_problem": {"type": "object", "required": ["since", "error"], "additionalProperties": false,
      "description": "while the store's writes fail; absent while they succeed",
      "properties": {"since": {"type": "string", "format": "date-time"}, "error": {"type": "string", "description": "the store's words for its latest failure"}}}}},
  "JobSpec": {
    "type": "object", "required": ["name"], "additionalProperties": false,
    "properties": {
      "name": {"type": "string", "minLength": 1, "maxLength": 128, "pattern": "^[^\\x00-\\x1f\\x7f]*$",
               "description": "any text without control characters"},
      "share": {"type": "string", "minLength": 1, "maxLength": 64, "default": "default"},
      "priority": {"type": "integer", "minimum": 0, "maximum": 9999},
      "nodes": {"type": "integer", "minimum": 1, "maximum": 1024, "default": 1},
      "nodes_min": {"type": "integer", "minimum": 1, "maximum": 1024},
      "cores_per_node": {"type": "integer", "minimum": 1, "maximum": 4096},
      "kind": {"enum": ["command", "simulated"], "default": "command"},
      "command": {"type": "object", "required": ["argv"], "additionalProperties": false, "properties": {
        "argv": {"type": "array", "minItems": 1, "maxItems": 1024, "items": {"type": "string", "pattern": "^[^\\x00]*$"}},
        "env": {"type": "object", "propertyNames": {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
                "additionalProperties": {"type": "string", "pattern": "^[^\\x00]*$"}},
        "workdir": {"type": "string", "minLength": 1, "maxLength": 4096, "pattern": "^/[^\\x00]*$"},
        "procs_per_node": {"type": "integer", "minimum": 1, "maximum": 256, "default": 1},
        "script": {"type": "string", "minLength": 2, "maxLength": 65536, "pattern": "^#![^\\x00]*$",
                   "description": "a batch script run in argv[0]'s place by its own #! line (trainyard submit FILE.sbatch)"},
        "output": {"type": "string", "minLength": 1, "maxLength": 4096, "pattern": "^([^%\\x00]|%[jxuNnAa%])*$",
                   "description": "a file stdout (and stderr unless error is given) is copied to, relative to the working directory, as sbatch -o: %j %x %u %N %n %A %a %% filled in; only the first node writes it unless it names the node (%N, %n)"},
        "error": {"type": "string", "minLength": 1, "maxLength": 4096, "pattern": "^([^%\\x00]|%[jxuNnAa%])*$",
                  "description": "a file stderr is copied to, as sbatch -e (patterns as output)"}}},
      "workload": {"$ref": "#/components/schemas/Workload"},
      "retry": {"type": "object", "additionalProperties": false, "properties": {
        "attempts": {"type": "integer", "minimum": 1, "maximum": 10},
        "evaluate_on_exit": {"type": "array", "items": {"type": "object", "required": ["action"], "properties": {
          "action": {"enum": ["retry", "exit", "RETRY", "EXIT"]}, "on_exit_code": {"type": "string"},
          "on_reason": {"type": "string"}, "on_class": {"type": "string"}}}}}},
      "timeout_s": {"type": "integer", "minimum": 1},
      "stuck_after_s": {"type": "integer", "minimum": 1, "maximum": 2592000,
                        "description": "seconds a rank may go without a step before it is stuck; unset: learned from its own steps, max(5 x p99 step interval, 30 s), 10 min until learned"},
      "preflight": {"type": "boolean"},
      "wait_for_capacity": {"type": "boolean", "default": false},
      "labels": {"type": "object", "propertyNames": {"pattern": "^[A-Za-z0-9][A-Za-z0-9._-]*$"},
                 "additionalProperties": {"type": "string", "pattern": "^[^\\x00-\\x1f\\x7f]*$"}},
      "depends_on": {"type": "array", "maxItems": 64, "items": {"type": "object", "required": ["job"], "additionalProperties": false,
        "properties": {"job": {"type": "integer", "minimum": 1},
                       "condition": {"enum": ["afterok", "afterany", "afternotok", "aftercorr"], "default": "afterok"}}}},
      "array": {"type": "string", "minLength": 1, "maxLength": 4096,
                "description": "a job array: 0-99, 0-99:4, 1,5,9 or a mix, optionally ending in %K (at most K tasks running)"},
      "code_version": {"type": "string", "minLength": 1, "maxLength": 256, "pattern": "^[^\\x00-\\x1f\\x7f]*$"},
      "hold": {"type": "boolean", "default": false, "description": "submit held: never scheduled until released"},
      "storage_limit_mb": {"type": "integer", "minimum": 1, "maximum": 1073741824,
                           "description": "checkpoint and log MiB the job may keep; over it its oldest checkpoints are pruned"},
      "memory_mb": {"type": "integer", "minimum": 1, "maximum": 16777216,
                    "description": "MiB each node's processes of an attempt may use together; past it they are OOM-killed (class oom)"},
      "replace_stragglers": {"type": "boolean", "default": false,
                             "description": "a rank named a straggler has the attempt checkpointed and the job queued again without its node"}},
    "if": {"required": ["kind"], "properties": {"kind": {"const": "simulated"}}},
    "then": {"not": {"required": ["command"]}},
    "else": {"required": ["command"], "not": {"required": ["workload"]}}
  },
  "Workload": {
    "type": "object", "additionalProperties": false,
    "description": "the simulated kernel's settings (README, The job spec); unset fields take the kernel's defaults",
    "properties": {
      "width": {"type": "integer", "minimum": 1, "maximum": 4096}, "depth": {"type": "integer", "minimum": 1, "maximum": 16},
      "input_dim": {"type": "integer", "minimum": 1, "maximum": 4096},
      "output_dim": {"type": "integer", "minimum": 1, "maximum": 4096},
      "global_batch": {"type": "integer", "minimum": 1, "maximum": 65536},
      "steps": {"type": "integer", "minimum": 1, "maximum": 10000000},
      "lr": {"type": "number", "minimum": 1e-9, "maximum": 10}, "min_lr": {"type": "number", "minimum": 0, "maximum": 10},
      "warmup": {"type": "integer", "minimum": 0, "maximum": 10000000},
      "seed": {"type": "integer", "minimum": 0},
      "precision": {"enum": ["fp32", "bf16", "bf16_sr", "FP32", "BF16", "BF16_SR"]},
      "checkpoint_every": {"type": "integer", "minimum": 0, "maximum": 10000000},
      "keep_checkpoints": {"type": "integer", "minimum": 1, "maximum": 100},
      "step_ms": {"type": "integer", "minimum": 0, "maximum": 600000},
      "spike_threshold": {"type": "number", "minimum": 0, "maximum": 1e9}}
  },
  "JobPatch": {
    "type": "object", "additionalProperties": false, "minProperties": 1,
    "description": "validated as a submission; an owner may only lower priority and shorten timeout_s",
    "properties": {
      "priority": {"type": "integer", "minimum": 0, "maximum": 9999},
      "timeout_s": {"type": "integer", "minimum": 1},
      "nodes": {"type": "integer", "minimum": 1, "maximum": 1024}}
  },
  "Job": {
    "type": "object", "required": ["id", "name", "user", "share", "state", "submitted_at", "spec"],
    "properties": {
      "id": {"type": "integer"}, "name": {"type": "string"}, "user": {"type": "string"}, "share": {"type": "string"},
      "state": {"$ref": "#/components/schemas/JobState"},
      "submitted_at": {"type": "string"}, "started_at": {"type": "string"}, "ended_at": {"type": "string"},
      "attempts": {"type": "integer"}, "reason": {"type": "string"}, "failure_class": {"type": "string"},
      "suggestion": {"type": "string"},
      "exit_code": {"type": "integer"}, "spec": {"$ref": "#/components/schemas/JobSpec"},
      "pending_reason": {"type": "object", "properties": {"code": {"type": "string"}, "message": {"type": "string"}}},
      "queue_position": {"type": "integer"},
      "held_by": {"enum": ["owner", "admin"], "description": "a held job: whose hold it is"},
      "stopping_to": {"enum": ["requeue", "preempt"], "description": "its attempt is being stopped to queue again"},
      "requeues": {"type": "integer", "description": "attempts stopped to queue again (not counted in attempts)"},
      "goodput": {"$ref": "#/components/schemas/Goodput"},
      "storage": {"$ref": "#/components/schemas/JobStorage"},
      "store_unreadable": {"type": "string", "description": "a live job answered from the daemon's memory while the store could not be read: what is left out (goodput, earlier attempts) and why"},
      "array_tasks": {"type": "object", "required": ["state", "counts"],
        "description": "GET /v1/jobs/{id} by an array's own id (not ID_N): the whole array, one state for it and its tasks by state",
        "properties": {"state": {"$ref": "#/components/schemas/JobState"},
                       "counts": {"type": "object", "additionalProperties": {"type": "integer"}}}},
      "array": {"type": "object", "description": "a task of a job array; a folded list row has counts (tasks by state) and no task_id",
        "properties": {"job_id": {"type": "integer"}, "task_id": {"type": "integer"}, "task_count": {"type": "integer"},
                       "limit": {"type": "integer"}, "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
                       "cancelled_tasks": {"type": "integer"}, "held_tasks": {"type": "integer"},
                       "released_tasks": {"type": "integer"}, "requeued_tasks": {"type": "integer"},
                       "updated_tasks": {"type": "integer"},
                       "unchanged_tasks": {"type": "integer", "description": "an array's hold, release, requeue or update: its active tasks it did not change"}}}}
  },
  "JobState": {"enum": ["PENDING", "STARTING", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"]},
  "JobAccounting": {"type": "object", "required": ["elapsed_s", "wait_s", "nodes", "cores", "core_hours", "goodput"],
    "properties": {
      "elapsed_s": {"type": ["number", "null"], "description": "first start to end (or now); null if it never started"},
      "wait_s": {"type": "number", "description": "submit to first start (or to its end, or now)"},
      "nodes": {"type": "integer"}, "cores": {"type": ["integer", "null"]},
      "core_hours": {"type": "number", "description": "cores its attempts held, over their lifetime"},
      "goodput": {"type": ["number", "null"], "description": "productive share of the allocated core-time, 0 to 1; null when under 1 core-s was allocated (nothing, or mostly start-up)"}}},
  "Cursor": {"type": ["string", "null"], "description": "opaque: pass it as cursor, with the same filters, for the next page; null on the last page"},
  "JobList": {"type": "object", "required": ["jobs", "next"], "properties": {
    "jobs": {"type": "array", "items": {"allOf": [{"$ref": "#/components/schemas/Job"},
      {"type": "object", "properties": {"accounting": {"$ref": "#/components/schemas/JobAccounting"}}}]}},
    "next": {"$ref": "#/components/schemas/Cursor"},
    "store_unreadable": {"type": "string", "description": "the list was made from the daemon's memory while the store could not be read: only live jobs, arrays not folded, and why"}}},
  "Queue": {"type": "object", "required": ["jobs", "total", "next"], "properties": {
    "jobs": {"type": "array", "items": {"$ref": "#/components/schemas/Job"}},
    "total": {"type": "integer", "description": "pending jobs in the queue (the caller's own for users)"},
    "next": {"type": ["string", "null"], "description": "the offset of the next page"}}},
  "Attempt": {"type": "object", "required": ["id", "job_id", "number", "nodes"], "properties": {
    "id": {"type": "integer"}, "job_id": {"type": "integer"}, "number": {"type": "integer"},
    "nodes": {"type": "array", "items": {"type": "string"}}, "exit_code": {"type": "integer"},
    "signal": {"type": "integer"}, "failure_class": {"type": "string"}, "reason": {"type": "string"},
    "cores_per_node": {"type": "integer"}, "created_at": {"type": "string", "format": "date-time"},
    "launched_at": {"type": "string", "format": "date-time"}, "started_at": {"type": "string", "format": "date-time"},
    "first_step_at": {"type": "string", "format": "date-time"}, "ended_at": {"type": "string", "format": "date-time"},
    "last_progress_at": {"type": "string", "format": "date-time"},
    "stuck_detected_at": {"type": "string", "format": "date-time"},
    "infrastructure": {"type": "boolean", "description": "the failure was the cluster's, not the job's: the attempt does not count against its retries"},
    "steps_completed": {"type": "integer"}, "last_step": {"type": "integer"},
    "checkpoint_ms": {"type": "integer", "description": "time the ranks spent writing checkpoints"},
    "checkpoint_failures": {"type": "object", "required": ["count", "last_error"],
      "description": "checkpoint writes that failed (the most any rank reported) and the last one's error; absent when none failed",
      "properties": {"count": {"type": "integer", "minimum": 1}, "last_error": {"type": "string"}}},
    "resumed_from": {"type": "string", "description": "the checkpoint directory the attempt resumed from"},
    "diagnosis": {"type": "string", "description": "why a stuck attempt was stopped: the rank, its phase, what the others did"},
    "provenance": {"$ref": "#/components/schemas/Provenance"},
    "output": {"type": "string", "description": "the first failed rank's last output lines (masked, at most 10 lines, 1,500 characters)"},
    "output_rank": {"type": "integer", "description": "the rank whose output that is"},
    "stragglers": {"type": "array", "description": "ranks whose time per step ran at 1.5x or more the median of the other ranks' for 3 windows of 10 steps",
      "items": {"type": "object", "required": ["rank", "node", "ratio", "found_at"], "properties": {
        "rank": {"type": "integer"}, "node": {"type": "string"}, "ratio": {"type": "number"},
        "found_at": {"type": "string", "format": "date-time"}}}},
    "state": {"enum": ["STARTING", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED", "REQUEUED", "PREEMPTED"]}}},
  "AttemptList": {"type": "object", "required": ["attempts"], "properties": {
    "attempts": {"type": "array", "items": {"$ref": "#/components/schemas/Attempt"}}}},
  "Provenance": {"type": "object", "required": ["job", "attempt", "attempt_id", "daemon", "spec", "spec_sha256", "ranks"],
    "properties": {
      "job": {"type": "integer"}, "attempt": {"type": "integer"}, "attempt_id": {"type": "integer"}, "user": {"type": "string"},
      "daemon": {"type": "object", "required": ["version", "commit"],
                 "properties": {"version": {"type": "string"}, "commit": {"type": "string"}}},
      "spec": {"$ref": "#/components/schemas/JobSpec"}, "spec_sha256": {"type": "string"},
      "code_version": {"type": "string"}, "kernel": {"type": "object"},
      "checkpoint": {"type": "object", "required": ["path", "step"], "properties": {"path": {"type": "string"}, "step": {"type": "integer"},
        "manifest_sha256": {"type": "string"}}},
      "ranks": {"type": "array", "items": {"type": "object", "required": ["rank", "node", "agent_version"], "properties": {
        "rank": {"type": "integer"}, "node": {"type": "string"}, "agent_version": {"type": "string"},
        "admitted_by": {"type": "object", "required": ["health_check", "verdict"],
                        "properties": {"health_check": {"type": "integer"}, "verdict": {"type": "string"}}},
        "environment": {"type": "object", "additionalProperties": {"type": "string"}},
        "user_facts": {"type": "object"}, "user_facts_error": {"type": "string"}}}}}},
  "JobLogs": {"type": "object", "required": ["job_id", "attempt_id", "attempt", "logs"], "properties": {
    "job_id": {"type": "integer"}, "attempt_id": {"type": "integer"}, "attempt": {"type": "integer"},
    "array": {"type": "object", "required": ["job_id", "task_id"], "description": "the array task whose logs these are",
              "properties": {"job_id": {"type": "integer"}, "task_id": {"type": "integer"}}},
    "logs": {"type": "array", "items": {"type": "object",
      "required": ["rank", "node", "text", "error", "log_bytes", "truncated"], "properties": {
      "rank": {"type": "integer"}, "node": {"type": "string"}, "text": {"type": "string"},
      "error": {"type": "string", "description": "why the rank's log could not be read; empty when it was"},
      "log_bytes": {"type": "integer"}, "truncated": {"type": "boolean"}}}}}},
  "CheckpointList": {"type": "object", "required": ["checkpoints"], "properties": {
    "checkpoints": {"type": "array", "items": {"type": "object",
      "required": ["step", "path", "recorded_by_attempt", "valid", "problem"], "properties": {
      "step": {"type": "integer"}, "path": {"type": "string"}, "recorded_by_attempt": {"type": ["integer", "null"]},
      "valid": {"type": "boolean"}, "problem": {"type": "string"}}}}}},
  "JobMetrics": {"type": "object", "required": ["job_id", "steps", "bucket_steps", "points", "spikes"], "properties": {
    "job_id": {"type": "integer"}, "steps": {"type": "integer", "description": "steps reported in all"},
    "bucket_steps": {"type": "integer", "description": "steps folded into each point"},
    "points": {"type": "array", "items": {"type": "object",
      "required": ["step", "first_step", "attempt_id", "loss", "loss_min", "loss_max", "grad_norm", "grad_norm_max",
                   "param_norm", "lr", "samples_per_s", "non_finite_losses", "spikes"], "properties": {
      "step": {"type": "integer", "description": "the bucket's last step"}, "first_step": {"type": "integer"},
      "attempt_id": {"type": "integer"}, "loss": {"type": ["number", "null"]}, "loss_min": {"type": ["number", "null"]},
      "loss_max": {"type": ["number", "null"]}, "grad_norm": {"type": ["number", "null"]},
      "grad_norm_max": {"type": ["number", "null"]}, "param_norm": {"type": ["number", "null"]},
      "lr": {"type": ["number", "null"]}, "samples_per_s": {"type": ["number", "null"]},
      "non_finite_losses": {"type": "integer"}, "spikes": {"type": "integer"}}}},
    "spikes": {"type": "array", "items": {"type": "object", "required": ["started_at_step", "steps_to_return"], "properties": {
      "started_at_step": {"type": "integer"},
      "steps_to_return": {"type": ["integer", "null"], "description": "null while the loss has not come back"}}}}}},
  "Node": {"type": "object", "required": ["name", "cores", "state", "connected", "free_cores", "used_cores", "attempts", "jobs"], "properties": {
    "name": {"type": "string"}, "cores": {"type": "integer"}, "memory_mb": {"type": "integer"},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "agent_version": {"type": "string"},
    "data_addr": {"type": "string", "description": "only to roles that read every job"},
    "state": {"enum": ["HEALTHY", "SUSPECT", "UNHEALTHY", "DRAINED", "DOWN"]},
    "state_reason": {"type": "string"}, "state_since": {"type": "string"}, "connected": {"type": "boolean"},
    "faults": {"type": "array", "items": {"type": "string"}}, "last_heartbeat": {"type": "string"},
    "cgroups": {"type": "string", "examples": ["v1", "v2", "unavailable: the agent is not root"],
                "description": "how the agent contains each attempt: a cgroup per attempt (v1 or v2), or why not"},
    "job_network": {"type": "string", "examples": ["netns", "unavailable: the agent is not root"],
                    "description": "whether the agent can give an attempt a network of its own (daemon --job-network), or why not"},
    "free_cores": {"type": "integer", "description": "cores usable now: none on a node that takes no work (not HEALTHY, or not connected)"},
    "used_cores": {"type": "integer", "description": "cores held by the attempts running on it"},
    "disks": {"type": "array", "description": "free space on its work and checkpoint filesystems (latest heartbeat)",
              "items": {"type": "object", "properties": {"role": {"enum": ["work", "checkpoint"]},
                                                         "free_mb": {"type": "integer"}, "total_mb": {"type": "integer"}}}},
    "attempts": {"type": "array", "items": {"type": "integer"}, "description": "a user sees only its own"},
    "jobs": {"type": "array", "items": {"type": "string"}, "examples": [["12", "9_3"]],
             "description": "the jobs of those attempts, as people name them (an array task as ID_N), in attempt order"},
    "other_attempts": {"type": "integer", "description": "to users: how many attempts of others run there"},
    "health_check_id": {"type": "integer", "description": "undrain: the check that returns the node to service"}}},
  "NodeList": {"type": "object", "required": ["nodes", "next"], "properties": {
    "nodes": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}, "next": {"$ref": "#/components/schemas/Cursor"}}},
  "DrainRequest": {"type": "object", "additionalProperties": false, "properties": {
    "reason": {"type": "string", "minLength": 1, "maxLength": 1024}, "stop_attempts": {"type": "boolean", "default": false}}},
  "CredentialForgotten": {"type": "object", "required": ["node", "credential"], "properties": {
    "node": {"type": "string"}, "credential": {"const": "forgotten"}}},
  "NodeHealth": {"type": "object", "required": ["node", "checks", "next"], "properties": {
    "node": {"type": "string"}, "checks": {"type": "array", "items": {"$ref": "#/components/schemas/NodeHealthRecord"}},
    "next": {"$ref": "#/components/schemas/Cursor"}}},
  "FaultsRequest": {"type": "object", "required": ["faults"], "additionalProperties": false, "properties": {
    "faults": {"type": "array", "maxItems": 4096, "items": {"type": "string", "examples": ["core:3=corrupt", "node=slow:2", "link=drop"]}}}},
  "FaultsAccepted": {"type": "object", "required": ["node", "faults", "message"], "properties": {
    "node": {"type": "string"}, "faults": {"type": "array", "items": {"type": "string"}}, "message": {"type": "string"}}},
  "HealthCheckRequest": {"type": "object", "required": ["nodes"], "additionalProperties": false, "properties": {
    "nodes": {"type": "array", "minItems": 1, "maxItems": 1024, "items": {"type": "string"}},
    "suites": {"type": "array", "minItems": 1, "items": {"enum": ["accelerator", "collective"]}}}},
  "HealthCheck": {"type": "object",
    "required": ["id", "kind", "nodes", "suites", "requested_by", "state", "created_at", "accelerator", "errors",
                 "collective_runs", "verdicts"], "properties": {
    "id": {"type": "integer"}, "kind": {"type": "string", "description": "what started it: on_demand for POST /v1/healthchecks"},
    "nodes": {"type": "array", "items": {"type": "string"}},
    "suites": {"type": "array", "items": {"enum": ["accelerator", "collective"]}}, "requested_by": {"type": "string"},
    "state": {"enum": ["RUNNING", "PASSED", "FAILED"]},
    "created_at": {"type": "string", "format": "date-time"}, "finished_at": {"type": "string", "format": "date-time"},
    "duration_ms": {"type": "integer"},
    "accelerator": {"type": "object", "description": "each tested node's accelerator suite, by node name",
                    "additionalProperties": {"$ref": "#/components/schemas/AcceleratorReport"}},
    "errors": {"type": "object", "description": "why a node could not be tested, by node name",
               "additionalProperties": {"type": "string"}},
    "collective_runs": {"type": "array", "description": "the collective suite over all the nodes first, then each pair test",
                        "items": {"$ref": "#/components/schemas/CollectiveRun"}},
    "verdicts": {"type": "array", "items": {"$ref": "#/components/schemas/NodeVerdict"}},
    "error": {"type": "string", "description": "why the check could not go on, when it could not (a suite it would not send: more ranks than the protocol allows); such a check is FAILED and judges no node by the suite it did not send"},
    "localisation": {"type": "object", "required": ["reference_busbw", "suspect_fraction", "tests"],
      "description": "when pair tests ran: the reference busbw per collective (the median of each node's best), the suspect fraction, and each pair's outcome and busbw",
      "properties": {"reference_busbw": {"$ref": "#/components/schemas/BusbwByCollective"}, "suspect_fraction": {"type": "number"},
        "tests": {"type": "array", "items": {"type": "object", "required": ["nodes", "outcome", "why", "busbw"], "properties": {
          "nodes": {"type": "array", "items": {"type": "string"}}, "outcome": {"enum": ["passed", "slow", "failed"]},
          "why": {"type": "string", "description": "empty when passed"},
          "busbw": {"$ref": "#/components/schemas/BusbwByCollective"}}}}}}}},
  "BusbwByCollective": {"type": "object", "description": "bus bandwidth in bytes per second by collective, where it was measured exactly",
    "propertyNames": {"enum": ["all_reduce", "all_gather", "reduce_scatter"]}, "additionalProperties": {"type": "number"}},
  "NodeVerdict": {"type": "object", "required": ["node", "state", "reason"], "properties": {
    "node": {"type": "string"}, "state": {"enum": ["HEALTHY", "SUSPECT", "UNHEALTHY"]}, "reason": {"type": "string"}}},
  "AcceleratorReport": {"type": "object", "required": ["cores", "duration_ms"], "properties": {
    "cores": {"type": "array", "items": {"type": "object", "required": ["core", "checks"], "properties": {
      "core": {"type": "integer"}, "checks": {"type": "array", "items": {"$ref": "#/components/schemas/AcceleratorCheck"}},
      "gemm_ms": {"type": "number", "description": "the fastest GEMM's time; absent in checks stored before protocol 16"}}}},
    "duration_ms": {"type": "number"}}},
  "AcceleratorCheck": {"type": "object", "required": ["test", "status", "measured", "limit", "duration_ms", "reason"], "properties": {
    "test": {"enum": ["gemm", "stochastic_rounding", "memory"]},
    "status": {"enum": ["passed", "failed", "timed_out", "crashed", "skipped"]},
    "measured": {"type": "number"}, "limit": {"type": "number", "description": "the most measured may be to pass"},
    "duration_ms": {"type": "number"}, "reason": {"type": "string"}}},
  "CollectiveRun": {"type": "object", "required": ["nodes", "ranks"], "properties": {
    "nodes": {"type": "array", "items": {"type": "string"}, "description": "rank i ran on nodes[i]"},
    "ranks": {"type": "array", "items": {"$ref": "#/components/schemas/RankCollectiveResult"}}}},
  "RankCollectiveResult": {"type": "object", "required": ["rank", "world_size", "collectives", "error"], "properties": {
    "rank": {"type": "integer"}, "world_size": {"type": "integer"},
    "collectives": {"type": "array", "items": {"type": "object", "required": ["kind", "exact", "bytes", "seconds", "busbw", "error"], "properties": {
      "kind": {"enum": ["all_reduce", "all_gather", "reduce_scatter"]},
      "exact": {"type": "boolean", "description": "every iteration's result was right; only then does busbw count"},
      "bytes": {"type": "integer"}, "seconds": {"type": "number"},
      "busbw": {"type": "number", "description": "bytes per second"}, "error": {"type": "string"}}}},
    "error": {"type": "string", "description": "why the suite stopped on this rank; empty when it ran to the end"},
    "failed_peer": {"type": "integer", "description": "the rank the transport failed on, when it names one"},
    "refused_connections": {"type": "integer", "description": "connections this rank's data-plane port refused while the suite ran (outside interference); absent when none"}}},
  "NodeHealthRecord": {"type": "object", "required": ["at", "check_id", "kind", "verdict", "reason", "collective"],
    "description": "what one health check found on one node", "properties": {
    "at": {"type": "string", "format": "date-time", "description": "when the daemon recorded it"},
    "check_id": {"type": "integer"}, "kind": {"type": "string"},
    "verdict": {"enum": ["HEALTHY", "SUSPECT", "UNHEALTHY", "NOT_TESTED"]}, "reason": {"type": "string"},
    "accelerator": {"$ref": "#/components/schemas/AcceleratorReport"},
    "error": {"type": "string", "description": "why the node could not be tested"},
    "collective": {"type": "array", "description": "the node's rank in each collective run it took part in",
      "items": {"type": "object", "required": ["nodes", "result"], "properties": {
        "nodes": {"type": "array", "items": {"type": "string"}}, "result": {"$ref": "#/components/schemas/RankCollectiveResult"}}}}}},
  "HealthCheckList": {"type": "object", "required": ["checks", "next"], "properties": {
    "checks": {"type": "array", "items": {"$ref": "#/components/schemas/HealthCheck"}}, "next": {"$ref": "#/components/schemas/Cursor"}}},
  "CanaryList": {"type": "object", "required": ["canaries", "next", "next_run_at"], "properties": {
    "canaries": {"type": "array", "items": {"$ref": "#/components/schemas/Job"}}, "next": {"$ref": "#/components/schemas/Cursor"},
    "next_run_at": {"type": ["string", "null"], "description": "when the next scheduled canary is due; null when canaries are off (--canary-interval-s 0)"}}},
  "Goodput": {"type": "object", "description": "allocated and productive core-seconds, and what was lost by cause",
              "required": ["goodput", "allocated_core_s", "productive_core_s", "lost_core_s"], "properties": {
      "goodput": {"type": ["number", "null"], "description": "productive share of the measured core-time (allocated less unmeasured), 0 to 1; null when under 1 core-s was measured"},
      "goodput_note": {"type": "string", "description": "why goodput is null"},
      "allocated_core_s": {"type": "number"}, "productive_core_s": {"type": "number"},
      "unmeasured_core_s": {"type": "number", "description": "running time of attempts that reported no step: neither kept nor lost"},
      "lost_core_s": {"type": "object", "additionalProperties": {"type": "number"}}}},
  "GoodputReport": {"type": "object", "required": ["cluster", "jobs"], "properties": {
    "window": {"type": "object", "description": "only with ?window=: the figures are the core-time that fell in it",
      "required": ["from", "to"], "properties": {"from": {"type": "string"}, "to": {"type": "string"}}},
    "cluster": {"$ref": "#/components/schemas/Goodput"},
    "jobs": {"type": "array", "items": {"type": "object", "properties": {
      "job_id": {"type": "integer"}, "name": {"type": "string"}, "state": {"$ref": "#/components/schemas/JobState"}}}}}},
  "ClusterHistory": {"type": "object", "additionalProperties": false,
    "required": ["window_s", "bucket_s", "sample_interval_s", "from", "to", "activity", "buckets"], "properties": {
    "window_s": {"type": "integer", "minimum": 3600}, "bucket_s": {"type": "integer", "minimum": 1},
    "sample_interval_s": {"type": "integer", "minimum": 0, "description": "how often the daemon samples (--history-interval-s); 0: history is off"},
    "from": {"type": "string", "format": "date-time"}, "to": {"type": "string", "format": "date-time"},
    "activity": {"type": "boolean", "description": "whether buckets carry attempts and goodput: only for roles that read every job"},
    "buckets": {"type": "array", "description": "oldest first; a stretch without samples (the daemon down) has no bucket",
      "items": {"$ref": "#/components/schemas/HistoryBucket"}}}},
  "HistoryBucket": {"type": "object", "additionalProperties": false,
    "required": ["at", "samples", "total_cores", "usable_cores", "allocated_cores", "pending_jobs", "pending_jobs_max", "running_jobs"],
    "properties": {
    "at": {"type": "string", "format": "date-time", "description": "the bucket's start"},
    "samples": {"type": "integer", "minimum": 1},
    "total_cores": {"type": "number", "minimum": 0, "description": "mean over the bucket's samples, as the next four"},
    "usable_cores": {"type": "number", "minimum": 0, "description": "of connected HEALTHY nodes"},
    "allocated_cores": {"type": "number", "minimum": 0}, "pending_jobs": {"type": "number", "minimum": 0},
    "running_jobs": {"type": "number", "minimum": 0}, "pending_jobs_max": {"type": "integer", "minimum": 0},
    "started_attempts": {"type": "integer", "minimum": 0, "description": "attempts that reached RUNNING in the bucket"},
    "failed_attempts": {"type": "object", "description": "attempts that failed in the bucket, by failure class",
      "additionalProperties": {"type": "integer", "minimum": 1}},
    "ended_core_s": {"type": "number", "minimum": 0, "description": "allocated core-seconds of the jobs that ended in the bucket"},
    "productive_core_s": {"type": "number", "minimum": 0},
    "goodput": {"type": ["number", "null"], "minimum": 0, "maximum": 1, "description": "productive over ended core-seconds; null when none ended"}}},
  "TokenRequest": {"type": "object", "required": ["user"], "additionalProperties": false, "properties": {
    "user": {"type": "string", "minLength": 1, "maxLength": 64},
    "role": {"enum": ["admin", "operator", "user", "viewer"], "default": "user"},
    "ttl_s": {"type": "integer", "minimum": 1, "maximum": 315360000}}},
  "Token": {"type": "object", "required": ["id", "user", "role", "created_at", "expires_at", "last_used_at"], "properties": {
    "id": {"type": "string"}, "user": {"type": "string"},
    "role": {"enum": ["admin", "operator", "user", "viewer", "agent"]},
    "created_at": {"type": "string"}, "expires_at": {"type": ["string", "null"]}, "last_used_at": {"type": ["string", "null"]}}},
  "NewToken": {"allOf": [{"$ref": "#/components/schemas/Token"},
    {"type": "object", "required": ["token"], "properties": {"token": {"type": "string", "description": "the secret, shown once"}}}]},
  "TokenList": {"type": "object", "required": ["tokens", "next"], "properties": {
    "tokens": {"type": "array", "items": {"$ref": "#/components/schemas/Token"}}, "next": {"$ref": "#/components/schemas/Cursor"}}},
  "TokenRevoked": {"type": "object", "required": ["id", "revoked"], "properties": {
    "id": {"type": "string"}, "revoked": {"const": true}}},
  "WhoAmI": {"type": "object", "required": ["user", "role", "token_id"], "properties": {
    "user": {"type": "string"}, "role": {"enum": ["admin", "operator", "user", "viewer"]},
    "token_id": {"type": "string"}}},
  "JoinToken": {"type": "object", "required": ["token"], "properties": {"token": {"type": "string"}}},
  "JobStorage": {"type": "object", "description": "what the job keeps on disk (GET /v1/jobs/{id} only)",
    "required": ["checkpoint_bytes", "log_bytes", "work_bytes", "over_quota"], "properties": {
    "checkpoint_bytes": {"type": "integer"}, "log_bytes": {"type": "integer"},
    "work_bytes": {"type": "integer", "description": "its attempts' work directories besides their logs"},
    "limit_mb": {"type": "integer", "description": "the job's storage_limit_mb"},
    "over_quota": {"type": "boolean", "description": "over its own or its share's quota at the latest check"}}},
  "ShareRequest": {"type": "object", "required": ["weight"], "additionalProperties": false, "properties": {
    "weight": {"type": "number", "minimum": 1e-6, "maximum": 1e6},
    "max_running_cores": {"type": "integer", "minimum": 1},
    "storage_limit_mb": {"type": "integer", "minimum": 1, "maximum": 1073741824,
                         "description": "checkpoint, log and work-directory MiB the share's jobs may keep together"},
    "members": {"type": "array", "maxItems": 10000, "items": {"type": "string"},
                "description": "the users who may submit to it; without it, every user"}}},
  "Share": {"type": "object", "required": ["name", "weight"], "properties": {
    "name": {"type": "string"}, "weight": {"type": "number"}, "max_running_cores": {"type": "integer"},
    "members": {"type": ["array", "null"], "items": {"type": "string"}, "description": "to admins only"},
    "usage_core_s": {"type": "number"}, "fair_share_factor": {"type": "number"},
    "expected_usage_core_s": {"type": "number", "description": "the share's weight's part of the cluster's usage"},
    "normalized_usage": {"type": "number", "description": "usage over the expected usage: above 1 uses more than its part"},
    "running_cores": {"type": "integer"},
    "pending_jobs": {"type": "integer", "description": "queued, or waiting on a dependency, a backoff or an array limit"},
    "held_jobs": {"type": "integer", "description": "pending and held by their owner or an admin (not in pending_jobs)"},
    "storage_limit_mb": {"type": "integer"}, "storage_checkpoint_bytes": {"type": "integer"},
    "storage_log_bytes": {"type": "integer"}, "storage_work_bytes": {"type": "integer"}}},
  "ShareList": {"type": "object", "required": ["shares"], "properties": {
    "shares": {"type": "array", "items": {"$ref": "#/components/schemas/Share"}}}},
  "AuditLog": {"type": "object", "required": ["events", "next"], "properties": {
    "events": {"type": "array", "items": {"type": "object", "properties": {
      "id": {"type": "integer"}, "at": {"type": "string"}, "action": {"type": "string"}, "user": {"type": "string"},
      "role": {"type": "string"}, "remote": {"type": "string"}, "route": {"type": "string"},
      "target": {"type": "string"}, "details": {"type": "object"}}}},
    "next": {"$ref": "#/components/schemas/Cursor"}}},
  "Event": {"type": "object", "required": ["id", "time", "type", "severity", "message", "details"], "properties": {
    "id": {"type": "integer"}, "time": {"type": "string"}, "type": {"type": "string"},
    "severity": {"type": "string", "enum": ["info", "warning", "error"]},
    "job": {"type": "integer"}, "attempt": {"type": "integer"}, "node": {"type": "string"},
    "user": {"type": "string"}, "share": {"type": "string"}, "message": {"type": "string"},
    "details": {"type": "object"}}},
  "EventList": {"type": "object", "required": ["events", "next"], "properties": {
    "events": {"type": "array", "items": {"$ref": "#/components/schemas/Event"}},
    "next": {"$ref": "#/components/schemas/Cursor"}}},
  "WebhookRequest": {"type": "object", "required": ["url", "events"], "additionalProperties": false, "properties": {
    "url": {"type": "string", "maxLength": 2048, "description": "http or https, no userinfo"},
    "events": {"type": "array", "minItems": 1, "maxItems": 32, "items": {"type": "string", "maxLength": 64},
               "description": "event types or globs (job.failed, node.*); each must match a type"},
    "format": {"enum": ["slack", "json"], "default": "slack"},
    "filter": {"type": "object", "additionalProperties": false, "properties": {
      "share": {"type": "string"}, "user": {"type": "string"}, "job": {"type": "integer", "minimum": 1}}}}},
  "Webhook": {"type": "object", "required": ["id", "owner", "created_at", "url", "events", "format", "filter", "cursor"],
    "properties": {"id": {"type": "integer"}, "owner": {"type": "string"}, "created_at": {"type": "string"},
      "url": {"type": "string"}, "events": {"type": "array", "items": {"type": "string"}},
      "format": {"enum": ["slack", "json"]}, "filter": {"type": "object"},
      "cursor": {"type": "integer", "description": "every event up to this id is delivered, dead-lettered or not wanted"}}},
  "NewWebhook": {"allOf": [{"$ref": "#/components/schemas/Webhook"},
    {"type": "object", "required": ["secret"], "properties": {"secret": {"type": "string", "description": "the signing secret, shown once"}}}]},
  "WebhookList": {"type": "object", "required": ["webhooks"], "properties": {
    "webhooks": {"type": "array", "items": {"$ref": "#/components/schemas/Webhook"}}}},
  "ShareDeleted": {"type": "object", "required": ["name", "deleted"], "properties": {
    "name": {"type": "string"}, "deleted": {"const": true}}},
  "WebhookDeleted": {"type": "object", "required": ["id", "deleted"], "properties": {
    "id": {"type": "integer"}, "deleted": {"const": true}}},
  "WebhookTestResult": {"type": "object", "required": ["delivered"], "properties": {
    "delivered": {"type": "boolean"}, "status": {"type": ["integer", "null"]}, "latency_ms": {"type": "integer"},
    "error": {"type": "string"}}},
  "WebhookDelivery": {"type": "object", "required": ["n", "first_event", "last_event", "state", "attempts"], "properties": {
    "n": {"type": "integer"}, "first_event": {"type": "integer"}, "last_event": {"type": "integer"},
    "state": {"enum": ["pending", "delivered", "dead", "retrying"]}, "attempts": {"type": "integer"},
    "first_attempt_at": {"type": "string"}, "next_retry_at": {"type": ["string", "null"]},
    "event_types": {"type": ["object", "null"], "additionalProperties": {"type": "integer"},
      "description": "in the list: the types of the events it carried, counted (null past the page's budget of 20,000 events)"},
    "log": {"type": "array", "items": {"type": "object", "properties": {
      "at": {"type": "string"}, "status": {"type": ["integer", "null"]}, "latency_ms": {"type": "integer"},
      "error": {"type": "string"}, "next_retry_at": {"type": ["string", "null"]}}}}}},
  "WebhookDeliveryList": {"type": "object", "required": ["deliveries", "next"], "properties": {
    "deliveries": {"type": "array", "items": {"$ref": "#/components/schemas/WebhookDelivery"}},
    "next": {"$ref": "#/components/schemas/Cursor"}}}
})json";

std::map<std::string, ApiSchema, std::less<>> build() {
  std::map<std::string, ApiSchema, std::less<>> schemas;
  const Json declared = Json::parse(kJsonSchemas);
  for (const auto& [name, schema] : declared.items()) schemas[name] = {"application/json", schema};
  schemas["PrometheusText"] = {std::string(prom::kContentType),
                               {{"type", "string"}, {"description", "Prometheus text exposition format 0.0.4"}}};
  schemas["EventStream"] = {"text/event-stream",
                            {{"type", "string"},
                             {"description", "Server-Sent Events: per event `id: <seq>`, `event: <type>` and `data: <the "
                                             "Event as one line of JSON>`, then a blank line; `: keep-alive` comments "
                                             "between them"}}};
  return schemas;
}

}  // namespace

const std::map<std::string, ApiSchema, std::less<>>& api_schemas() {
  static const auto schemas = build();
  return schemas;
}

}  // namespace trainyard::daemon
