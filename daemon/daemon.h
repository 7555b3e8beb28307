#pragma once
// The daemon's composition root (docs/STYLE.md "Composition root"): builds store, store worker, tokens, scheduler, job
// manager, gateway, API and server, wires them, and runs the I/O loop until SIGINT/SIGTERM, which
// shut it down gracefully (GracefulShutdown in daemon.cpp; SIGHUP reloads the TLS certificate and key).
#include <cstdint>
#include <string>
#include <vector>

#include "daemon/node_claims.h"

namespace trainyard::daemon {

struct DaemonOptions {
  std::string listen = "127.0.0.1:8080";
  std::string tls_cert;         // PEM chain; with tls_key, the port speaks HTTPS and wss only
  std::string tls_key;
  std::string agent_client_ca;  // agents must present a certificate from this CA naming their node
  bool insecure_http = false;   // plain HTTP on a non-loopback address, knowingly
  std::string data_dir;
  std::string store;            // sqlite://PATH or postgresql://...; default: sqlite://DATA_DIR/trainyard.db
  // Active / standby on PostgreSQL (daemon/standby.h): the URL clients reach this daemon at
  // (default scheme://LISTEN as bound), and how long its lease lasts unrenewed (renewed every ttl/5).
  std::string advertise_url;
  std::int64_t lease_ttl_ms = 5000;
  std::string checkpoint_root;  // default: DATA_DIR/checkpoints
  std::int64_t heartbeat_interval_ms = 5000;
  std::int64_t node_timeout_ms = 30000;
  // An agent with no heartbeat acknowledged for this long stops its attempts (daemon/fence_timing.h);
  // -1: derived from the node timeout and kill grace; 0: never.
  std::int64_t fence_ms = -1;
  std::int64_t disconnect_grace_ms = 2000;  // a closed agent connection not reopened within it: node lost
  std::int64_t warm_spares = 0;             // idle nodes kept freshly tested for resumes
  std::int64_t warm_for_s = 300;            // a node checked within this needs no pre-flight to resume on
  std::int64_t kill_grace_ms = 10000;
  std::int64_t body_limit_bytes = 1 << 20;
  std::int64_t usage_half_life_s = 7 * 24 * 3600;
  std::int64_t tick_ms = 500;
  std::int64_t retry_backoff_ms = 2000;
  std::int64_t compute_reservation_pct = 0;  // cores held back for shares with no running work
  bool preempt = false;                      // checkpoint-aware preemption (scheduler/preemption.h)
  std::int64_t preempt_below_fair_share_pct = 100;  // the waiting share's standing (U/S) must be below this
  std::int64_t preempt_above_fair_share_pct = 150;  // victims' shares' standing must be above this
  std::int64_t preempt_min_run_s = 600;             // a gang runs this long before it may be preempted
  std::string preempt_exempt_shares;                // comma-separated shares never preempted
  std::string placement_label = "rack";      // multi-node jobs prefer nodes sharing its value
  std::int64_t health_interval_s = 3600;     // periodic checks of idle nodes; 0: off
  std::int64_t health_first_check_s = 60;    // the first early, once 3+ idle nodes compare; 0: not early
  std::int64_t health_task_timeout_ms = 60'000;
  std::int64_t suspect_pct = 50;             // busbw below this percent of the set's median: SUSPECT
  std::int64_t slow_gemm_pct = 200;          // GEMM time at this percent of its peers' median: SUSPECT
  std::int64_t min_free_disk_mb = 1024;      // a node's work or checkpoint filesystem below it: SUSPECT
  std::int64_t storage_grace_s = 60;         // a job over its storage quota this long is stopped
  std::int64_t min_free_disk_pct = 0;        // likewise, as a percent of the filesystem; 0: off
  std::int64_t health_collective_kib = 1024; // buffer of each health-test collective
  std::string failure_rules_file;
  std::int64_t max_infra_retries = 3;        // infrastructure retries per job, apart from its own attempts
  std::int64_t canary_interval_s = 3600;     // 0: no canaries
  std::int64_t history_interval_s = 60;      // how often the cluster is sampled for its history; 0: never
  std::int64_t canary_nodes = 2;            // extra classification rules, checked before the defaults
  std::int64_t max_connections = 10'000;        // open HTTP and agent connections, in total
  std::int64_t max_connections_per_ip = 1'000;  // and from one remote address
  std::int64_t max_header_bytes = 16 << 10;     // a request's line and header fields
  std::int64_t header_timeout_ms = 10'000;      // from a request's first byte to its header's end
  std::int64_t body_timeout_ms = 60'000;        // for its whole body
  std::int64_t max_ws_message_bytes = 8 << 20;  // one message from an agent
  std::int64_t rate_limit_rps = 50;             // API requests per second per user; 0: no limit
  std::int64_t rate_limit_burst = 200;
  std::int64_t rate_limit_admins = 0;           // 1: admins are rate-limited too
  std::int64_t max_pending_per_user = 10'000;   // 0: no cap; admins are exempt
  std::int64_t max_user_priority = 0;           // admins are exempt
  std::int64_t max_node_cores = NodeClaimLimits{}.max_cores;
  std::int64_t max_node_memory_mb = NodeClaimLimits{}.max_memory_mb;
  std::int64_t max_array_size = 10'000;         // tasks in one job array
  bool metrics_public = false;                  // GET /metrics without a token
  std::int64_t shutdown_grace_ms = 10'000;      // SIGTERM: how long requests in flight may take
  std::string dashboard_dir;  // the built web/dist; default: the installed one, else none (logged)
  std::int64_t event_retention_days = 30;       // older events are pruned (daemon/event_retention.h)
  std::vector<std::string> webhook_allowed_hosts;  // where users' webhooks may point ("*.example.com" allowed)
  std::string public_url;                          // the dashboard's address, for links in Slack messages
  std::string webhook_ca_file;                     // trusted for HTTPS webhooks besides the system store
  std::int64_t webhook_backoff_initial_ms = 1000;  // first retry within this; doubling up to the cap
  std::int64_t webhook_backoff_cap_ms = 600'000;
  std::int64_t webhook_give_up_s = 24 * 3600;      // then the delivery is dead-lettered
  std::int64_t webhook_max_per_minute = 20;        // storm control, per webhook
  std::int64_t webhook_connect_timeout_ms = 5000;
  std::int64_t webhook_timeout_ms = 10'000;        // a whole delivery attempt
  std::int64_t sse_keepalive_ms = 15'000;       // `: keep-alive` on idle event streams
  // Live events wait this long to go to stream clients together: a write to every client at each
  // commit made 1,000 clients cost the daemon 13 times its CPU per submitted job
  // (bench/events_stream); the window costs a client at most its length in latency.
  std::int64_t sse_flush_ms = 50;
};

inline constexpr const char* kTrainyardVersion = TRAINYARD_VERSION;  // project(VERSION) in CMakeLists.txt

// Parses flags, TRAINYARD_DAEMON_* variables and --config; returns false when it printed what was
// asked (--help, --version, --print-config). Throws InvalidInput naming the setting and its source.
bool parse_daemon_options(int argc, const char* const* argv, DaemonOptions& out);
int run_daemon(const DaemonOptions& options);

}  // namespace trainyard::daemon
