// The REST API's shapes as the dashboard reads them (daemon/api/schemas.cpp).

export type Role = "admin" | "operator" | "user" | "viewer";
export interface Who { user: string; role: Role; token_id: string }

export type JobState = "PENDING" | "STARTING" | "RUNNING" | "SUCCEEDED" | "FAILED" | "CANCELLED";
export interface Goodput {
  goodput: number | null;
  goodput_note?: string;  // why goodput is null: nothing allocated yet, or too short to judge
  allocated_core_s: number;
  productive_core_s: number;
  lost_core_s: Record<string, number>;
}
export interface JobList { jobs: Job[]; next: string | null }
// What GET /v1/jobs reports of each row's use of the cluster (daemon/job_accounting.h); an array's
// row sums its tasks'.
export interface JobAccounting {
  elapsed_s: number | null;  // first start to end (or now); null if it never started
  wait_s: number;            // submit to first start (or to its end, or now)
  nodes: number;
  cores: number | null;      // nodes x cores per node; null for whole nodes never held
  core_hours: number;
  goodput: number | null;    // 0 to 1; null under a core-second allocated
}
export interface Job {
  id: number; name: string; user: string; share: string; state: JobState;
  submitted_at: string; started_at?: string; ended_at?: string;
  attempts?: number; reason?: string; failure_class?: string; suggestion?: string; exit_code?: number;
  spec: Record<string, unknown> & { nodes?: number; cores_per_node?: number; priority?: number;
    kind?: string; workload?: { steps?: number } };
  pending_reason?: { code: string; message: string };
  queue_position?: number;
  goodput?: Goodput;
  accounting?: JobAccounting;  // in GET /v1/jobs only
  // A task of an array, or (in a list) the array folded into one row with its tasks counted by state.
  array?: { job_id: number; task_id?: number; task_count: number; counts?: Record<string, number> };
  // GET /v1/jobs/{id} by an array's own id: the whole array, one state and its tasks by state.
  array_tasks?: { state: JobState; counts: Record<string, number> };
}
export interface Attempt {
  id: number; job_id: number; number: number; nodes: string[];
  exit_code?: number; signal?: number; failure_class?: string; reason?: string;
  started_at?: string; ended_at?: string; infrastructure?: boolean; suggestion?: string;
  resumed_from?: string; steps_completed?: number; diagnosis?: string;
  state?: "STARTING" | "RUNNING" | "SUCCEEDED" | "FAILED" | "CANCELLED" | "REQUEUED" | "PREEMPTED";
  // A failed attempt: its first failed rank's last output lines (masked, at most 10 lines and
  // 1,500 characters, "\n" between them; user-controlled text) and that rank (on nodes[output_rank]).
  output?: string; output_rank?: number;
  // Ranks whose time per step ran at `ratio` times the median of the other ranks' (a straggler).
  stragglers?: Straggler[];
}
export interface Straggler { rank: number; node: string; ratio: number; found_at: string }
export type NodeState = "HEALTHY" | "SUSPECT" | "UNHEALTHY" | "DRAINED" | "DOWN";
export interface Node {
  name: string; cores: number; memory_mb?: number; free_cores: number; used_cores: number; state: NodeState; state_reason?: string;
  state_since?: string; connected: boolean; labels?: Record<string, string>; faults?: string[];
  last_heartbeat?: string; agent_version?: string;
  data_addr?: string;  // only to roles that read every job
  cgroups?: string;    // "v1", "v2", or why the agent cannot contain attempts
  disks?: { role: "work" | "checkpoint"; free_mb: number; total_mb: number }[];
  attempts: number[];  // its running attempts' ids (a user's own only)
  jobs: string[];      // those attempts' jobs as people name them ("12", an array task "9_3"), in attempt order
  other_attempts?: number;   // to users: how many attempts of others run there
  health_check_id?: number;  // an undrain's answer: the check that returns the node to service
}
export interface MetricPoint {
  step: number; first_step: number; attempt_id: number;
  loss: number | null; loss_min: number | null; loss_max: number | null;
  grad_norm: number | null; grad_norm_max: number | null; lr: number | null;
  samples_per_s: number | null; spikes: number;
}
export interface JobMetrics {
  job_id: number; steps: number; bucket_steps: number; points: MetricPoint[];
  spikes: { started_at_step: number; steps_to_return: number | null }[];
}
export interface Share {
  name: string; weight: number; usage_core_s: number; normalized_usage: number;
  fair_share_factor: number; running_cores: number; pending_jobs: number; max_running_cores?: number;
}
export type Severity = "info" | "warning" | "error";
// The events contract: GET /v1/events and the SSE stream's data.
export interface TrainyardEvent {
  id: number; time: string; type: string; severity: Severity;
  job?: number; attempt?: number; node?: string; user?: string; share?: string;
  message: string; details?: Record<string, unknown>;
}
// GET /v1/cluster/history: the daemon's samples of the cluster (one each sample_interval_s) over a
// window, as buckets of bucket_s in time order. A bucket without samples is absent (the daemon was
// down, or keeps no history).
export interface HistoryBucket {
  at: string;  // the bucket's start
  samples: number;
  // Means over the bucket's samples; usable cores are those on nodes that take work now.
  total_cores: number; usable_cores: number; allocated_cores: number;
  pending_jobs: number; pending_jobs_max: number; running_jobs: number;
  // The activity, only where the answer's `activity` is true (they tell of other users' jobs).
  // Sums over the bucket: attempts that reached RUNNING, failed attempts by failure class.
  started_attempts?: number; failed_attempts?: Record<string, number>;
  // Core-seconds of jobs that ended in the bucket; goodput is productive / ended, null when none ended.
  ended_core_s?: number; productive_core_s?: number; goodput?: number | null;
}
export interface ClusterHistory {
  window_s: number; bucket_s: number;
  sample_interval_s: number;  // 0: the daemon keeps no history
  from: string; to: string;
  activity?: boolean;         // whether buckets carry attempts and goodput: for roles that read every job
  buckets: HistoryBucket[];
}
