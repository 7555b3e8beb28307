#include "daemon/api/routes.h"

#include "daemon/api/handlers.h"
#include "proto/messages.h"

namespace trainyard::daemon {

namespace {

constexpr std::int64_t kMax = INT64_MAX;

// A comma-separated list of states, in either case, as proto/state_list.h reads it.
constexpr std::string_view kJobStates =
    R"({"pattern": "^(PENDING|STARTING|RUNNING|SUCCEEDED|FAILED|CANCELLED|pending|starting|running|succeeded|failed|cancelled)(,(PENDING|STARTING|RUNNING|SUCCEEDED|FAILED|CANCELLED|pending|starting|running|succeeded|failed|cancelled))*$"})";
constexpr std::string_view kNodeStates =
    R"({"pattern": "^(HEALTHY|SUSPECT|UNHEALTHY|DRAINED|DOWN|healthy|suspect|unhealthy|drained|down)(,(HEALTHY|SUSPECT|UNHEALTHY|DRAINED|DOWN|healthy|suspect|unhealthy|drained|down))*$"})";
// An event type or a glob over types (daemon/events/events.h).
constexpr std::string_view kEventTypeGlob = R"({"pattern": "^[a-z._*?]+$"})";

}  // namespace

const std::vector<Route>& api_routes() {
  using A = Action;
  // A route's row reads best as a few dense lines, grouped by resource.
  // clang-format off
  static const std::vector<Route> routes = {
      {"GET", "/healthz", std::nullopt, "", "", "Healthz", 200, "Liveness, the daemon's version and its role (active or standby)", {}, on<&ServiceApi::healthz>},
      {"GET", "/v1/openapi.json", std::nullopt, "", "", "OpenApiDocument", 200,
       "This API as an OpenAPI 3.1 document, generated from the route table", {}, on<&ServiceApi::openapi>},
      {"GET", "/metrics", A::read_metrics, "read metrics", "", "PrometheusText", 200,
       "Prometheus text exposition (without a token when the daemon runs with --metrics-public)", {},
       on<&ServiceApi::metrics_exposition>},

      {"GET", "/v1/jobs", A::use_api, "list jobs", "", "JobList", 200,
       "Jobs, newest first (one's own unless the role reads every job), each with its accounting (elapsed, wait, "
       "cores, core-hours, goodput), an array as one row with its tasks counted by state; ?array=ID lists that "
       "array's tasks; state is a comma-separated list; since and until bound the submit time (RFC 3339, a "
       "date, or a span back like 1d); before and after bound the id; pages of limit (default 100) continue with "
       "cursor=next",
       {{"state", "string", 0, 0, kJobStates}, {"share", "string"}, {"user", "string"}, {"since", "string"},
        {"until", "string"}, {"limit", "integer", 1, 1000}, {"before", "integer", 1, kMax}, {"after", "integer", 0, kMax},
        {"array", "integer", 1, kMax}, {"cursor", "string"}},
       on<&JobsApi::list_jobs>},
      {"POST", "/v1/jobs", A::submit_jobs, "submit jobs", "JobSpec", "Job", 201,
       "Submit a job; answered once it is on disk", {}, on<&JobsApi::submit_job>},
      {"GET", "/v1/jobs/{id}", A::use_api, "read jobs", "", "Job", 200,
       "A job with its goodput; pending jobs carry pending_reason and queue_position", {}, on<&JobsApi::get_job>},
      {"POST", "/v1/jobs/{id}/cancel", A::submit_jobs, "cancel jobs", "", "Job", 200,
       "Cancel a job (its own for a user, any for an admin); an array's id cancels all its tasks, ID_N one task", {},
       on<&JobsApi::cancel_job>},
      {"POST", "/v1/jobs/{id}/hold", A::submit_jobs, "hold jobs", "", "Job", 200,
       "Hold a pending job: it keeps its place but is never scheduled until released (an admin's hold only an admin "
       "releases); an array's id holds all its pending tasks, ID_N one task", {}, on<&JobControlApi::hold_job>},
      {"POST", "/v1/jobs/{id}/release", A::submit_jobs, "release jobs", "", "Job", 200,
       "Release a held job to the queue; an array's id releases all its held tasks, ID_N one task", {}, on<&JobControlApi::release_job>},
      {"POST", "/v1/jobs/{id}/requeue", A::submit_jobs, "requeue jobs", "", "Job", 200,
       "Stop a running job without using an attempt and queue it again (a simulated job checkpoints first); an array's "
       "id requeues all its running tasks, ID_N one task", {},
       on<&JobControlApi::requeue_job>},
      {"PATCH", "/v1/jobs/{id}", A::submit_jobs, "change jobs", "JobPatch", "Job", 200,
       "Change a pending job's priority, timeout_s or nodes (an owner only lowers priority and shortens the time "
       "limit; an admin anything), validated as a submission; an array's id changes all its pending tasks, ID_N one task", {}, on<&JobControlApi::update_job>},
      {"GET", "/v1/jobs/{id}/attempts", A::use_api, "read jobs", "", "AttemptList", 200,
       "The job's attempts with nodes, exit code, failure class and reason", {}, on<&JobsApi::job_attempts>},
      {"GET", "/v1/jobs/{id}/attempts/{n}/provenance", A::use_api, "read jobs", "", "Provenance", 200,
       "Everything attempt n (1-based, or last) of the job depended on: versions, spec and its SHA-256, kernel, resumed "
       "checkpoint, nodes and the health checks that admitted them, masked environment, the job's own facts",
       {}, on<&JobsApi::attempt_provenance>},
      {"GET", "/v1/jobs/{id}/logs", A::use_api, "read jobs", "", "JobLogs", 200,
       "The tail of each rank's output of an attempt (the newest by default), fetched from the agents",
       {{"rank", "integer", 0, 1023}, {"tail", "integer", 1, kMaxLogLines}, {"attempt", "integer", 1, 1 << 20}}, on<&JobsApi::job_logs>},
      {"GET", "/v1/jobs/{id}/checkpoints", A::use_api, "read jobs", "", "CheckpointList", 200,
       "The job's checkpoints and whether a retry may resume from each", {}, on<&JobsApi::job_checkpoints>},
      {"GET", "/v1/jobs/{id}/metrics", A::use_api, "read jobs", "", "JobMetrics", 200,
       "Per-step training metrics of the kept trajectory, downsampled, with gradient-norm spikes", {{"max_points", "integer", 1, 100'000}},
       on<&JobsApi::job_metrics>},

      {"GET", "/v1/queue", A::use_api, "read jobs", "", "Queue", 200,
       "Pending jobs in the scheduler's order (yours only, unless your role reads every job); next is the offset of the next page",
       {{"offset", "integer", 0, INT32_MAX}, {"limit", "integer", 1, 1000}}, on<&QueueApi::list_queue>},
      {"GET", "/v1/nodes", A::use_api, "read nodes", "", "NodeList", 200,
       "Registered nodes by name: state is a comma-separated list, label KEY=VALUE, name_prefix a prefix; every "
       "match without limit, else pages of limit that continue with cursor=next",
       {{"state", "string", 0, 0, kNodeStates}, {"label", "string", 0, 0, R"({"pattern": "^[^=]+=.*$"})"},
        {"name_prefix", "string"}, {"limit", "integer", 1, 1000}, {"cursor", "string"}},
       on<&NodesApi::list_nodes>},
      {"GET", "/v1/nodes/{name}", A::use_api, "read nodes", "", "Node", 200, "One node", {}, on<&NodesApi::get_node>},
      {"POST", "/v1/nodes/{name}/drain", A::operate_nodes, "drain nodes", "DrainRequest", "Node", 200,
       "Take a node out of service (the body is optional)", {}, on<&NodesApi::drain_node>},
      {"POST", "/v1/nodes/{name}/undrain", A::operate_nodes, "undrain nodes", "", "Node", 200,
       "Return a node to service; an UNHEALTHY one through a health check", {}, on<&NodesApi::undrain_node>},
      {"DELETE", "/v1/nodes/{name}/credential", A::manage_tokens, "forget a node's credential", "",
       "CredentialForgotten", 200, "Forget a disconnected node's own credential, so it may join again", {},
       on<&NodesApi::forget_node_credential>},
      {"GET", "/v1/nodes/{name}/health", A::use_api, "read nodes", "", "NodeHealth", 200,
       "The node's health history, newest first; pages continue with cursor=next",
       {{"limit", "integer", 1, 1000}, {"cursor", "string"}}, on<&NodesApi::node_health>},
      {"PUT", "/v1/nodes/{name}/faults", A::operate_nodes, "inject faults", "FaultsRequest", "FaultsAccepted", 202,
       "Replace the node's simulated faults (applied by its agent)", {}, on<&NodesApi::set_node_faults>},
      {"DELETE", "/v1/nodes/{name}/faults", A::operate_nodes, "inject faults", "", "FaultsAccepted", 202,
       "Clear the node's simulated faults", {}, on<&NodesApi::clear_node_faults>},

      {"GET", "/v1/goodput", A::use_api, "read goodput", "", "GoodputReport", 200,
       "Goodput of the newest jobs and their total; with window (24h, 7d) the cluster's over that window, "
       "from every attempt that ran in it",
       {{"window", "string", 0, 0, R"({"pattern": "^[0-9]+[hd]$"})"}, {"limit", "integer", 1, 10'000}}, on<&ClusterApi::cluster_goodput>},
      {"GET", "/v1/cluster", A::use_api, "read the cluster's condition", "", "ClusterStatus", 200,
       "The cluster's own condition: store_problem, since when and why the daemon's store refuses writes (every "
       "change is refused meanwhile and the daemon's own wait), absent while it writes",
       {}, on<&ServiceApi::cluster_status>},
      {"GET", "/v1/cluster/history", A::use_api, "read the cluster's history", "", "ClusterHistory", 200,
       "The cluster over a window (24h by default, up to 7d): cores usable and allocated, queue depth, attempts "
       "started and failed by class, and goodput, from the samples the daemon keeps, in time buckets",
       {{"window", "string", 0, 0, R"({"pattern": "^[1-9][0-9]*[hd]$"})"}}, on<&ClusterApi::cluster_history>},
      {"GET", "/v1/canaries", A::use_api, "read canaries", "", "CanaryList", 200,
       "Canary jobs the daemon ran, newest first; pages continue with cursor=next",
       {{"limit", "integer", 1, 1000}, {"cursor", "string"}}, on<&HealthApi::list_canaries>},
      {"POST", "/v1/canaries", A::operate_nodes, "run canaries", "", "Job", 201,
       "Run a canary job now, as the schedule would (409 while one runs or when no node is ready); the next "
       "scheduled one is an interval later", {}, on<&HealthApi::run_canary>},
      {"POST", "/v1/healthchecks", A::operate_nodes, "start health checks", "HealthCheckRequest", "HealthCheck", 202,
       "Start a health check of named nodes", {}, on<&HealthApi::start_health_check>},
      {"GET", "/v1/healthchecks", A::use_api, "read health checks", "", "HealthCheckList", 200,
       "Finished health checks, newest first, each with its verdicts, runs and pair tests; pages continue with cursor=next",
       {{"limit", "integer", 1, 100}, {"cursor", "string"}},
       on<&HealthApi::list_health_checks>},
      {"GET", "/v1/healthchecks/{id}", A::use_api, "read health checks", "", "HealthCheck", 200,
       "A health check's state, verdicts and collective runs", {}, on<&HealthApi::get_health_check>},

      {"GET", "/v1/whoami", A::use_api, "use the API", "", "WhoAmI", 200,
       "The caller: its user, role and token id (the dashboard decides what to show from it)", {}, on<&TokensApi::whoami>},
      {"GET", "/v1/tokens", A::use_api, "list tokens", "", "TokenList", 200,
       "Tokens without their secrets: every one for an admin, one's own for others; all without limit, else pages "
       "that continue with cursor=next",
       {{"limit", "integer", 1, 1000}, {"cursor", "string"}}, on<&TokensApi::list_tokens>},
      {"POST", "/v1/tokens", A::manage_tokens, "create tokens", "TokenRequest", "NewToken", 201,
       "Create a token; its secret is shown once", {}, on<&TokensApi::create_token>},
      {"POST", "/v1/tokens/join/rotate", A::manage_tokens, "rotate the join token", "", "JoinToken", 200,
       "Replace the agents' join token; joined nodes keep their credentials", {}, on<&TokensApi::rotate_join_token>},
      {"DELETE", "/v1/tokens/{token_id}", A::use_api, "revoke tokens", "", "TokenRevoked", 200,
       "Revoke a token at once (one's own, or any for an admin)", {}, on<&TokensApi::revoke_token>},

      {"GET", "/v1/shares", A::use_api, "read shares", "", "ShareList", 200,
       "The fair-share table (admins also see members)", {}, on<&SharesApi::list_shares>},
      {"DELETE", "/v1/shares/{name}", A::manage_shares, "change shares", "", "ShareDeleted", 200,
       "Delete a share made by mistake, with its settings, members and usage: only while no job is pending or "
       "running in it (409 naming one otherwise); jobs that ended in it keep its name",
       {}, on<&SharesApi::delete_share>},
      {"PUT", "/v1/shares/{name}", A::manage_shares, "change shares", "ShareRequest", "Share", 200,
       "Create or change a share", {}, on<&SharesApi::put_share>},

      {"POST", "/v1/webhooks", A::submit_jobs, "create webhooks", "WebhookRequest", "NewWebhook", 201,
       "Create a webhook; its signing secret is shown once (users: their own jobs' events, allowed hosts only)", {},
       on<&WebhooksApi::create_webhook>},
      {"GET", "/v1/webhooks", A::use_api, "list webhooks", "", "WebhookList", 200,
       "Webhooks without their secrets: every one for an admin, one's own for others", {}, on<&WebhooksApi::list_webhooks>},
      {"GET", "/v1/webhooks/{id}", A::use_api, "read webhooks", "", "Webhook", 200, "A webhook and its cursor", {},
       on<&WebhooksApi::get_webhook>},
      {"DELETE", "/v1/webhooks/{id}", A::use_api, "delete webhooks", "", "WebhookDeleted", 200,
       "Delete a webhook and its deliveries (one's own, or any for an admin)", {}, on<&WebhooksApi::delete_webhook>},
      {"POST", "/v1/webhooks/{id}/test", A::use_api, "test webhooks", "", "WebhookTestResult", 200,
       "Send a signed test message now and report the receiver's answer", {}, on<&WebhooksApi::test_webhook>},
      {"GET", "/v1/webhooks/{id}/deliveries", A::use_api, "read webhooks", "", "WebhookDeliveryList", 200,
       "The webhook's deliveries, newest first, each with its attempts; pages continue with cursor=next",
       {{"before", "integer", 1, kMax}, {"limit", "integer", 1, 1000}, {"cursor", "string"}}, on<&WebhooksApi::webhook_deliveries>},
      {"POST", "/v1/webhooks/{id}/deliveries/{n}/retry", A::use_api, "retry deliveries", "", "WebhookDelivery", 202,
       "Send a dead-lettered delivery again", {}, on<&WebhooksApi::retry_webhook_delivery>},

      {"GET", "/v1/audit", A::read_audit, "read the audit log", "", "AuditLog", 200,
       "Every change made through the API, oldest first; pages continue with cursor=next",
       {{"after", "integer", 0, kMax}, {"limit", "integer", 1, 1000}, {"cursor", "string"}},
       on<&EventsApi::list_audit>},
      {"GET", "/v1/events", A::use_api, "read events", "", "EventList", 200,
       "Events, oldest first or with order=newest newest first: one's own jobs' and the cluster's (every event for "
       "roles that read every job); type is a glob (job.*), and audit.* events, for those that read the audit log, "
       "come only when the type names them; after (oldest first) or before (newest first) is an event id to start "
       "from; since (RFC 3339, a date, or a span back like 10m) leaves out older events; pages continue with "
       "cursor=next",
       {{"order", "string", 0, 0, R"({"enum": ["oldest", "newest"], "default": "oldest"})"},
        {"after", "integer", 0, kMax}, {"before", "integer", 1, kMax}, {"since", "string"},
        {"type", "string", 0, 0, kEventTypeGlob}, {"job", "integer", 1, kMax}, {"node", "string"},
        {"limit", "integer", 1, 1000}, {"cursor", "string"}},
       on<&EventsApi::list_events>},
      {"GET", "/v1/events/stream", A::use_api, "read events", "", "EventStream", 200,
       "The events of GET /v1/events as Server-Sent Events, live; from after an id (Last-Event-ID or after) "
       "the stored ones first, with no gap and none twice",
       {{"after", "integer", 0, kMax}, {"type", "string", 0, 0, kEventTypeGlob}, {"job", "integer", 1, kMax},
        {"node", "string"}},
       on<&EventsApi::stream_events>},
  };
  // clang-format on
  return routes;
}

bool path_matches(std::string_view pattern, const std::vector<std::string>& segments) {
  std::size_t i = 0;
  std::size_t at = 1;  // past the leading '/'
  while (at <= pattern.size()) {
    const std::size_t end = std::min(pattern.find('/', at), pattern.size());
    const std::string_view part = pattern.substr(at, end - at);
    if (i == segments.size()) return false;
    if (!part.starts_with('{') && part != segments[i]) return false;
    ++i;
    at = end + 1;
  }
  return i == segments.size();
}

}  // namespace trainyard::daemon
