#pragma once
// The REST API (v1, JSON). A pure request handler: it takes a request and answers through the
// responder, so tests drive it without a socket. Every route is declared once in the route table
// (daemon/api/routes.h), which `handle` dispatches from and GET /v1/openapi.json describes; the
// handlers live by resource under daemon/api/. Every error is {"error":{"code","message","field"}}
// with the right 4xx.
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "daemon/api/auditor.h"
#include "daemon/api/handlers.h"
#include "daemon/api/job_views.h"
#include "daemon/base/auth.h"
#include "daemon/dashboard_files.h"
#include "daemon/request_limits.h"
#include "net/http_server.h"

namespace trainyard::daemon {

struct RouteMatch;

// The dispatcher: it owns one handler object per resource (daemon/api/handlers.h), each built
// with only what its routes use, and passes each request to the one its route binds.
class Api {
 public:
  Api(JobManager& jobs, StoreWorker& store, FileWorker& files, TokenRegistry& tokens, const TimeSource& clock,
      Timers& timers, std::string version, std::string checkpoint_root, UserLimits limits = {},
      std::filesystem::path join_token_file = {});
  void handle(net::HttpRequest request, net::HttpResponder respond);

  // GET /metrics answers what `render` returns (Prometheus text); without a token when
  // `public_access`, else to roles that read every job. Unset, /metrics is a 404.
  void set_metrics_exposition(std::function<std::string()> render, bool public_access) {
    service_.set_metrics_exposition(std::move(render), public_access);
  }
  // Hears of every answered request once: its method (or "other" for one no route knows), the
  // route table's pattern ("/v1/jobs/{id}", or "unmatched"), the status and the seconds it took.
  using RequestObserver =
      std::function<void(const std::string& method, const std::string& route_pattern, int status, double seconds)>;
  void set_request_observer(RequestObserver observe) { observe_request_ = std::move(observe); }
  // GETs no route takes, outside /v1, are answered from the dashboard's files (without a token).
  void set_dashboard(DashboardFiles files) { dashboard_ = std::move(files); }
  // Serves /v1/webhooks from `webhooks` (unset, those routes are 404s).
  void set_webhooks(WebhookRegistry& webhooks, WebhookOptions options) {
    webhooks_.emplace(webhooks, std::move(options), store_, audit_, clock_);
  }
  // GET /v1/events/stream's subscribers: the daemon hands them the committed events.
  EventStreams& event_streams() { return events_.streams(); }
  // GET /v1/cluster/history chooses its buckets knowing how often samples are taken (0: never).
  void set_history_interval(std::chrono::seconds interval) { cluster_.set_history_interval(interval); }
  // GET /healthz names this active daemon's lease: its epoch and advertise URL (daemon/standby.h).
  void set_lease(store::LeaseState lease) { service_.set_lease(std::move(lease)); }
  // What GET /healthz reports of the store: why it looks unreachable, or nullopt (ActiveLease).
  void set_store_health(std::function<std::optional<std::string>()> problem) {
    service_.set_store_health(std::move(problem));
  }

 private:
  RouteMatch match(const net::HttpRequest& request) const;
  // Whether the route is on: /metrics only once an exposition is set, /v1/webhooks once webhooks are.
  bool serves(const Route& route) const;
  bool needs_token(const Route* route, const net::HttpRequest& request) const;
  // Authenticates and rate-limits the caller; false when it answered instead.
  bool admit(ApiCall& call);
  ApiHandlers handlers();

  StoreWorker& store_;
  TokenRegistry& tokens_;
  const TimeSource& clock_;
  const JobManager& job_manager_;
  RateLimiter rate_limiter_;
  RequestObserver observe_request_;
  std::optional<DashboardFiles> dashboard_;
  Auditor audit_;
  JobViews views_;
  ServiceApi service_;
  JobsApi jobs_;
  JobControlApi job_control_;
  QueueApi queue_;
  NodesApi nodes_;
  HealthApi health_;
  ClusterApi cluster_;
  TokensApi tokens_api_;
  SharesApi shares_;
  std::optional<WebhooksApi> webhooks_;
  EventsApi events_;
};

}  // namespace trainyard::daemon
