#pragma once
// The daemon's composition root (docs/STYLE.md "Composition root"): builds store, store worker, tokens, scheduler, job
// manager, gateway, API and server, wires them, and runs the I/O loop until SIGINT/SIGTERM, which
// shut it down gracefully (GracefulShutdown in daemon.cpp; SIGHUP reloads the TLS certificate and key).
#include <chrono>
#include <string>

#include "daemon/job_manager_flags.h"
#include "daemon/nodes/node_claims.h"
#include "daemon/request_limits.h"
#include "daemon/webhooks/webhook_registry.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "scheduler/types.h"

namespace trainyard::daemon {

// The daemon's settings: its own, then each component's, whose flags and config-file keys the
// component declares (add_job_manager_flags, net::add_server_flags, ...) bound to its own config.
struct DaemonOptions {
  std::string listen = "127.0.0.1:8080";
  bool insecure_http = false;  // plain HTTP on a non-loopback address, knowingly
  std::string data_dir;
  std::string store;  // sqlite://PATH or postgresql://...; default: sqlite://DATA_DIR/trainyard.db
  // Active / standby on PostgreSQL (daemon/standby.h): the URL clients reach this daemon at
  // (default scheme://LISTEN as bound), and how long its lease lasts unrenewed (renewed every ttl/5).
  std::string advertise_url;
  Millis lease_ttl{5000};
  std::string checkpoint_root;  // default: DATA_DIR/checkpoints
  std::string dashboard_dir;    // the built web/dist; default: the installed one, else none (logged)
  bool metrics_public = false;  // GET /metrics without a token
  Millis shutdown_grace{10'000};              // SIGTERM: how long requests in flight may take
  std::chrono::seconds history_interval{60};  // how often the cluster is sampled for its history; 0: never
  std::chrono::days event_retention{30};      // older events are pruned (daemon/events/event_retention.h)
  Millis sse_keepalive{15'000};               // `: keep-alive` on idle event streams
  // Live events wait this long to go to stream clients together: a write to every client at each
  // commit made 1,000 clients cost the daemon 13 times its CPU per submitted job
  // (bench/events_stream); the window costs a client at most its length in latency.
  Millis sse_flush{50};

  net::HttpServerOptions server;
  JobManagerSettings job_manager;
  scheduler::Config scheduler;
  UserLimits users;
  NodeClaimLimits node_claims;
  WebhookOptions webhooks;
  net::HttpClientOptions webhook_client;
};

inline constexpr const char* kTrainyardVersion = TRAINYARD_VERSION;  // project(VERSION) in CMakeLists.txt

// Parses flags, TRAINYARD_DAEMON_* variables and --config; returns false when it printed what was
// asked (--help, --version, --print-config). Throws InvalidInput naming the setting and its source.
bool parse_daemon_options(int argc, const char* const* argv, DaemonOptions& out);
int run_daemon(const DaemonOptions& options);

}  // namespace trainyard::daemon
