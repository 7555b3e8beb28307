// The REST API's shapes as the dashboard reads them, taken from api.gen.ts (generated from the
// daemon's OpenAPI document, daemon/api/schemas.cpp) so that they change when the API does.
import type { components } from "./api.gen";

type Schemas = components["schemas"];

export type Who = Schemas["WhoAmI"];
export type Role = Who["role"];

export type JobState = Schemas["JobState"];
export type Goodput = Schemas["Goodput"];
export type JobList = Schemas["JobList"];
// What GET /v1/jobs reports of each row's use of the cluster (daemon/telemetry/job_accounting.h); an array's
// row sums its tasks'.
export type JobAccounting = Schemas["JobAccounting"];
export type Job = Schemas["Job"];
export type JobSpec = Schemas["JobSpec"];
export type Attempt = Schemas["Attempt"];
export type Straggler = NonNullable<Attempt["stragglers"]>[number];
export type Node = Schemas["Node"];
export type NodeState = Node["state"];
export type Share = Schemas["Share"];
// The events contract: GET /v1/events and the SSE stream's data.
export type TrainyardEvent = Schemas["Event"];
export type Severity = TrainyardEvent["severity"];
// GET /v1/cluster/history: the daemon's samples of the cluster (one each sample_interval_s) over a
// window, as buckets of bucket_s in time order. A bucket without samples is absent (the daemon was
// down, or keeps no history).
export type ClusterHistory = Schemas["ClusterHistory"];
export type HistoryBucket = Schemas["HistoryBucket"];

// GET /v1/jobs/{id}/metrics: the training curve in buckets of bucket_steps steps, and loss spikes.
export type JobMetrics = Schemas["JobMetrics"];
export type MetricPoint = JobMetrics["points"][number];

// GET /v1/healthchecks: the newest checks, each with its runs, verdicts and pair tests.
export type HealthCheck = Schemas["HealthCheck"];
export type HealthCheckList = Schemas["HealthCheckList"];
export type Localisation = NonNullable<HealthCheck["localisation"]>;
export type PairTest = Localisation["tests"][number];
export type HealthCheckRequest = Schemas["HealthCheckRequest"];
export type Suite = NonNullable<HealthCheckRequest["suites"]>[number];
// GET /v1/nodes/{name}/health: what each check found on that node.
export type NodeHealthRecord = Schemas["NodeHealthRecord"];
export type CanaryList = Schemas["CanaryList"];
// GET /v1/jobs/{id}/attempts/{n}/provenance: what an attempt ran with.
export type Provenance = Schemas["Provenance"];

// GET /v1/cluster: the cluster's own condition; store_problem while the daemon's store refuses writes.
export type ClusterStatus = Schemas["ClusterStatus"];
