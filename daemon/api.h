#pragma once
// The REST API (v1, JSON). A pure request handler: it takes a request and answers through the
// responder, so tests drive it without a socket. Every route is declared once in the route table
// (daemon/api/routes.h), which `handle` dispatches from and GET /v1/openapi.json describes; the
// handlers live by resource under daemon/api/. Every error is {"error":{"code","message","field"}}
// with the right 4xx.
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "daemon/audit.h"
#include "daemon/auth.h"
#include "daemon/dashboard_files.h"
#include "daemon/event_streams.h"
#include "daemon/job_manager.h"
#include "daemon/request_limits.h"
#include "daemon/store_worker.h"
#include "daemon/webhook_registry.h"
#include "net/http_server.h"

namespace trainyard::daemon {

struct ApiCall;
struct Route;
struct RouteMatch;

class Api {
 public:
  Api(JobManager& jobs, StoreWorker& store, FileWorker& files, TokenRegistry& tokens, const TimeSource& clock,
      Timers& timers, std::string version, std::string checkpoint_root, UserLimits limits = {},
      std::filesystem::path join_token_file = {});
  void handle(net::HttpRequest request, net::HttpResponder respond);

  // GET /metrics answers what `render` returns (Prometheus text); without a token when
  // `public_access`, else to roles that read every job. Unset, /metrics is a 404.
  void set_metrics_exposition(std::function<std::string()> render, bool public_access);
  // Hears of every answered request once: its method (or "other" for one no route knows), the
  // route table's pattern ("/v1/jobs/{id}", or "unmatched"), the status and the seconds it took.
  using RequestObserver =
      std::function<void(const std::string& method, const std::string& route_pattern, int status, double seconds)>;
  void set_request_observer(RequestObserver observe);
  // GETs no route takes, outside /v1, are answered from the dashboard's files (without a token).
  void set_dashboard(DashboardFiles files) { dashboard_ = std::move(files); }
  // Serves /v1/webhooks from `webhooks` (unset, those routes are 404s).
  void set_webhooks(WebhookRegistry& webhooks, WebhookOptions options);
  // GET /v1/events/stream's subscribers: the daemon hands them the committed events.
  EventStreams& event_streams() { return event_streams_; }
  // GET /v1/cluster/history chooses its buckets knowing how often samples are taken (0: never).
  void set_history_interval(std::chrono::seconds interval) { history_interval_ = interval; }
  // GET /healthz names this active daemon's lease: its epoch and advertise URL (daemon/standby.h).
  void set_lease(store::LeaseState lease) { lease_ = std::move(lease); }
  // What GET /healthz reports of the store: why it looks unreachable, or nullopt (ActiveLease).
  void set_store_health(std::function<std::optional<std::string>()> problem) { store_problem_ = std::move(problem); }

 private:
  friend const std::vector<Route>& api_routes();

  RouteMatch match(const net::HttpRequest& request) const;
  // Whether the route is on: /metrics only once an exposition is set.
  bool serves(const Route& route) const;
  bool needs_token(const Route* route, const net::HttpRequest& request) const;
  // Authenticates and rate-limits the caller; false when it answered instead.
  bool admit(ApiCall& call);

  // daemon/api/service.cpp
  void healthz(ApiCall call);
  void openapi(ApiCall call);
  void metrics_exposition(ApiCall call);
  // daemon/api/jobs.cpp
  void submit_job(ApiCall call);
  void list_jobs(ApiCall call);
  void get_job(ApiCall call);
  void cancel_job(ApiCall call);
  void accept_job(ApiCall call, JobSpec spec);  // submit_job's second half, once dependencies are known
  void cancel_array(ApiCall call, const Job& root);  // every task of the array still active
  void hold_job(ApiCall call);
  void release_job(ApiCall call);
  void requeue_job(ApiCall call);
  void update_job(ApiCall call);
  void job_attempts(ApiCall call);
  void attempt_provenance(ApiCall call);
  void job_logs(ApiCall call);
  void job_checkpoints(ApiCall call);
  void job_metrics(ApiCall call);
  // daemon/api/queue.cpp
  void list_queue(ApiCall call);
  // Loads a job (active view first, else the store), checks the caller may see it, then continues.
  void with_job(ApiCall call, JobId id, std::function<void(ApiCall, Job)> then);
  // The job the path's {id} names: "12", or task 3 of array 12 as "12_3".
  void with_job(ApiCall call, std::function<void(ApiCall, Job)> then);
  // A job array as one row of the job list: its first task's fields, the array's id, its tasks by state.
  Json array_row(const Job& task, const std::map<std::string, int>& counts, const Principal& viewer) const;
  // What the API adds to a job's record: why a pending job waits and its place in the queue.
  Json live_fields(const Job& job) const;
  // A job as `viewer` may read it: the values of secret-looking environment variables are masked
  // for everyone but the job's owner (README "Secrets in a job's environment").
  Json job_json(const Job& job, const Principal& viewer) const;
  Json storage_json(const Job& job) const;  // checkpoint and log bytes, quota (storage_usage.h)
  // daemon/api/nodes.cpp
  void list_nodes(ApiCall call);
  void get_node(ApiCall call);
  void set_node_faults(ApiCall call);
  void clear_node_faults(ApiCall call);
  void change_node_faults(ApiCall call, bool clear);
  void drain_node(ApiCall call);
  void undrain_node(ApiCall call);
  void forget_node_credential(ApiCall call);
  void node_health(ApiCall call);
  // A node as `who` may see it: admins see all; users neither the data-plane address nor the ids
  // of other users' attempts (only how many there are).
  Json node_json(const NodeView& view, const Principal& who) const;
  // daemon/api/health.cpp
  void start_health_check(ApiCall call);
  void get_health_check(ApiCall call);
  void list_health_checks(ApiCall call);
  void list_canaries(ApiCall call);
  void run_canary(ApiCall call);
  // daemon/api/goodput.cpp
  void cluster_goodput(ApiCall call);
  // daemon/api/cluster_history.cpp
  void cluster_history(ApiCall call);
  // daemon/api/tokens.cpp
  void create_token(ApiCall call);
  void list_tokens(ApiCall call);
  void revoke_token(ApiCall call);
  void rotate_join_token(ApiCall call);
  void whoami(ApiCall call);
  // daemon/api/shares.cpp
  void list_shares(ApiCall call);
  void put_share(ApiCall call);
  void delete_share(ApiCall call);
  // daemon/api/webhooks.cpp
  void create_webhook(ApiCall call);
  void store_new_webhook(const ApiCall& call, const store::WebhookRecord& webhook);
  void list_webhooks(ApiCall call);
  void get_webhook(ApiCall call);
  void delete_webhook(ApiCall call);
  void test_webhook(ApiCall call);
  void webhook_deliveries(ApiCall call);
  void retry_webhook_delivery(ApiCall call);
  void resend_delivery(const ApiCall& call, std::int64_t id, std::int64_t n, std::optional<store::WebhookDelivery> delivery);
  // The route's webhook {id} if the caller may see it (else a 404), then continues.
  void with_webhook(ApiCall call, std::function<void(ApiCall, store::WebhookRecord)> then);
  // daemon/api/audit.cpp
  void list_audit(ApiCall call);
  void list_events(ApiCall call);
  void stream_events(ApiCall call);
  // The audit event of the change `call` made (daemon/audit.h), for a handler that writes it with
  // the change; `audit` writes it on its own, once the change succeeded.
  store::Event audit_event(const ApiCall& call, AuditRecord what) const;
  // The same for a change the job manager commits, whose target it names (a new job's id).
  AuditOf audit_of(const ApiCall& call, std::string action, Json details) const;
  void set_hold(ApiCall call, bool held);  // hold_job and release_job
  void audit(const ApiCall& call, AuditRecord what);

  JobManager& jobs_;
  StoreWorker& store_;
  FileWorker& files_;
  TokenRegistry& tokens_;
  const TimeSource& clock_;
  std::string version_;
  std::string checkpoint_root_;
  RateLimiter rate_limiter_;
  std::size_t max_pending_per_user_;
  int max_user_priority_;
  std::filesystem::path join_token_file_;  // the daemon's join.token, rewritten when it is rotated
  std::string openapi_text_;               // rendered on first request: the table does not change
  std::function<std::string()> render_metrics_;
  bool metrics_public_ = false;
  RequestObserver observe_request_;
  std::optional<DashboardFiles> dashboard_;
  WebhookRegistry* webhooks_ = nullptr;
  WebhookOptions webhook_options_;
  EventStreams event_streams_;
  store::LeaseState lease_;
  std::chrono::seconds history_interval_{60};
  std::function<std::optional<std::string>()> store_problem_;
};

// The longest lifetime a token may be given ("ttl_s"): ten years.
inline constexpr std::int64_t kMaxTokenTtlS = 10LL * 365 * 24 * 3600;

}  // namespace trainyard::daemon
