#pragma once
// The REST API (v1, JSON). A pure request handler: it takes a request and answers through the
// responder, so tests drive it without a socket. Every error is
// {"error":{"code","message","field"}} with the right 4xx.
#include <filesystem>
#include <functional>
#include <string>

#include "daemon/audit.h"
#include "daemon/auth.h"
#include "daemon/job_manager.h"
#include "daemon/request_limits.h"
#include "daemon/store_worker.h"
#include "net/http_server.h"

namespace trainyard {

class Api {
 public:
  Api(JobManager& jobs, StoreWorker& store, FileWorker& files, TokenRegistry& tokens, const TimeSource& clock,
      std::string version, std::string checkpoint_root, UserLimits limits = {},
      std::filesystem::path join_token_file = {});
  void handle(net::HttpRequest request, net::HttpResponder respond);

  // GET /metrics answers `render()` (the Prometheus text format) to tokens whose role may
  // read_metrics, or to anyone when `public_access` (--metrics-public). Without it, /metrics is 404.
  void set_metrics_exposition(std::function<std::string()> render, bool public_access);
  // Hears of every answer as it is sent: the method, the route pattern the request matched
  // ("/v1/jobs/{id}", or "other"), the status and the seconds since the request arrived.
  using RequestObserver =
      std::function<void(const std::string& method, const std::string& route_pattern, int status, double seconds)>;
  void set_request_observer(RequestObserver observe);

 private:
  struct Call;  // one request in flight: the request, the caller, the responder

  void submit_job(Call call);
  void list_jobs(Call call);
  void get_job(Call call, JobId id);
  void cancel_job(Call call, JobId id);
  void job_attempts(Call call, JobId id);
  void job_logs(Call call, JobId id);
  void job_checkpoints(Call call, JobId id);
  void job_metrics(Call call, JobId id);
  void list_nodes(Call call);
  void get_node(Call call, const std::string& name);
  void set_node_faults(Call call, const std::string& name, bool clear);
  void drain_node(Call call, const std::string& name);
  void undrain_node(Call call, const std::string& name);
  void forget_node_credential(Call call, const std::string& name);
  void node_health(Call call, const std::string& name);
  void start_health_check(Call call);
  void get_health_check(Call call, std::int64_t id);
  void list_canaries(Call call);
  void cluster_goodput(Call call);
  void create_token(Call call);
  void list_tokens(Call call);
  void revoke_token(Call call, const std::string& id);
  void rotate_join_token(Call call);
  void list_shares(Call call);
  void put_share(Call call, const std::string& name);
  void list_audit(Call call);
  void serve_metrics(Call call);
  // The audit event of the change `call` made (daemon/audit.h), for a handler that writes it with
  // the change; `audit` writes it on its own, once the change succeeded.
  Event audit_event(const Call& call, AuditRecord what) const;
  void audit(const Call& call, AuditRecord what);

  // Loads a job (active view first, else the store), checks the caller may see it, then continues.
  void with_job(Call call, JobId id, std::function<void(Call, Job)> then);
  // What the API adds to a job's record: why a pending job waits and its place in the queue.
  Json live_fields(const Job& job) const;
  Json job_json(const Job& job) const;
  // A node as `who` may see it: admins see all; users neither the data-plane address nor the ids
  // of other users' attempts (only how many there are).
  Json node_json(const NodeView& view, const Principal& who) const;

  JobManager& jobs_;
  StoreWorker& store_;
  FileWorker& files_;
  TokenRegistry& tokens_;
  const TimeSource& clock_;
  std::string version_;
  std::string checkpoint_root_;
  RateLimiter rate_limiter_;
  std::size_t max_pending_per_user_;
  std::filesystem::path join_token_file_;  // the daemon's join.token, rewritten when it is rotated
  std::function<std::string()> render_metrics_;
  bool metrics_public_ = false;
  RequestObserver observe_request_;
};

// The longest lifetime a token may be given ("ttl_s"): ten years.
inline constexpr std::int64_t kMaxTokenTtlS = 10LL * 365 * 24 * 3600;

}  // namespace trainyard
