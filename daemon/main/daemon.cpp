#include "daemon/main/daemon.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <spdlog/spdlog.h>

#include "daemon/api/api.h"
#include "daemon/cluster_sampler.h"
#include "daemon/daemon_metrics.h"
#include "daemon/events/event_retention.h"
#include "daemon/policy/fence_timing.h"
#include "daemon/gateway.h"
#include "daemon/graceful_shutdown.h"
#include "daemon/nodes/join_token.h"
#include "daemon/own_pauses.h"
#include "daemon/pause_tolerant_timers.h"
#include "daemon/nodes/private_files.h"
#include "daemon/request_limits.h"
#include "daemon/standby.h"
#include "daemon/webhooks/webhook_flags.h"
#include "daemon/webhooks/webhook_outbox.h"
#include "daemon/webhooks/webhook_url.h"
#include "net/http_server.h"
#include "net/server_flags.h"
#include "net/steady_timers.h"
#include "net/tls.h"
#include "proto/flag_parser.h"
#include "proto/messages.h"
#include "scheduler/config_flags.h"
#include "store/store_url.h"

namespace trainyard::daemon {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// The admin token and the agents' join token are made on first start and kept in the data dir
// (mode 0600); the store keeps only their hashes. A token file others could read is refused. A
// file whose token the store does not know was revoked, unless the store has no tokens at all
// (`fresh_store`: a new database beside old files): it stays revoked; deleting the file makes a
// new one at the next start.
void ensure_bootstrap_token(store::Store& store, TokenRegistry& tokens, const fs::path& file, const std::string& user, store::Role role,
                            TimePoint now, bool fresh_store) {
  if (const Result<void> usable = check_token_file_private(file); !usable) throw std::runtime_error(usable.error().message);
  std::string secret = fs::exists(file) ? read_file(file) : "";
  const bool created = secret.empty();
  if (created) {
    secret = generate_token_secret();
    write_file_atomically(file, secret + "\n", 0600);
    spdlog::info("event=token_file_created path={} role={}", file.string(), to_string(role));
  }
  store::TokenRecord record = new_token_record(secret, user, role, now);
  if (!created && !fresh_store && !store.token_by_hash(record.hash)) {
    spdlog::warn("event=token_file_revoked path={} hint=\"its token was revoked; delete the file and restart for a new one\"",
                 file.string());
    return;
  }
  if (!store.token_by_hash(record.hash)) {
    store::Change change;
    change.tokens.push_back(record);
    store.commit(std::span<const store::Change>(&change, 1));
  } else {
    record = *store.token_by_hash(record.hash);
  }
  tokens.add(record);
}

// Last uses of tokens reach the store lazily (TokenRegistry::take_uses_to_persist).
void persist_token_uses(TokenRegistry& tokens, StoreWorker& store, MonoTime now) {
  store::Change change;
  change.token_uses = tokens.take_uses_to_persist(now);
  if (change.token_uses.empty()) return;
  store.write(std::move(change), [](const Result<void>& written, store::Change&) {
    if (!written) spdlog::warn("event=token_uses_not_stored");
  });
}

std::pair<std::string, unsigned short> split_listen(const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) throw InvalidInput("--listen", "must be HOST:PORT, got \"" + listen + "\"");
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port_text = listen.substr(colon + 1);
  int port = -1;
  try {
    std::size_t used = 0;
    port = std::stoi(port_text, &used);
    if (used != port_text.size()) port = -1;
  } catch (const std::exception&) {
  }
  if (port < 0 || port > 65535) throw InvalidInput("--listen", "port must be 0..65535, got \"" + port_text + "\"");
  return {host, static_cast<unsigned short>(port)};
}

// Tokens cross the wire in every request: off this machine, only over TLS unless told otherwise.
// The TLS files are loaded once here so that a bad one stops the start, naming its flag.
void check_transport_security(const DaemonOptions& o) {
  const net::TlsServerFiles& files = o.server.tls;
  if (!files.cert_file.empty() || !files.key_file.empty()) {
    net::make_server_tls_context(files);
    return;
  }
  if (!files.client_ca_file.empty()) {
    throw InvalidInput("--agent-client-ca", "needs --tls-cert and --tls-key: client certificates exist only over TLS");
  }
  const std::string host = split_listen(o.listen).first;
  if (!net::is_loopback_address(host) && !o.insecure_http) {
    throw InvalidInput("--listen", "refusing to serve plain HTTP on " + host +
                                       ", which is not a loopback address: API tokens and agent credentials would "
                                       "cross the network in clear text. Give --tls-cert and --tls-key to serve "
                                       "HTTPS, or --insecure-http if TLS is handled in front of the daemon");
  }
}

// A port the system has free now, for `--listen HOST:0`: the lease names the URL before anything
// listens on it.
unsigned short free_port(const std::string& host) {
  asio::io_context io;
  const asio::ip::tcp::acceptor probe(io, asio::ip::tcp::endpoint(asio::ip::make_address(host), 0));
  return probe.local_endpoint().port();
}

// With a store several daemons share (PostgreSQL), serves as a standby until this daemon holds the
// lease, and keeps it from then on (daemon/standby.h); with SQLite, always active.
struct Leadership {
  std::string holder = lease_holder_id();
  unsigned short port;
  std::string advertise_url;  // empty: the listening URL
  store::LeaseState lease;
  std::optional<ActiveLease> kept;  // none: the store has no lease
};

Leadership take_leadership(store::Store& store, const store::StoreUrl& store_url, const DaemonOptions& o, Millis fence,
                           const std::string& host, unsigned short port, const fs::path& data_dir) {
  Leadership leadership{.port = port, .advertise_url = o.advertise_url};
  if (store_url.kind != store::StoreUrl::Kind::postgresql) return leadership;
  if (o.checkpoint_root.empty()) {
    // A daemon that takes over resumes jobs from the checkpoints under its own root.
    spdlog::warn("event=checkpoint_root_private detail=\"no --checkpoint-root: checkpoints go under this daemon's data "
                 "directory, where a daemon that takes over from it will not find them; give every daemon on this "
                 "store the same --checkpoint-root on shared storage\"");
  }
  if (const auto warning = takeover_warning(fence, o.lease_ttl)) {
    spdlog::warn("event=fence_shorter_than_takeover detail=\"{}\"", *warning);
  }
  const Activation active =
      serve_as_standby_until_active(store, {.host = host,
                                            .port = port != 0 ? port : free_port(host),
                                            .server = o.server,
                                            .advertise_url = o.advertise_url,
                                            .holder = leadership.holder,
                                            .lease_ttl = o.lease_ttl,
                                            .version = kTrainyardVersion,
                                            .on_listening = [&data_dir](const std::string& url) {
                                              write_file_atomically(data_dir / "daemon.addr", url + "\n", 0644);
                                            }});
  leadership.port = active.port;
  leadership.advertise_url = active.advertise_url;
  leadership.lease = active.lease;
  leadership.kept.emplace(active.lease.epoch, o.lease_ttl, active.sent_at);
  return leadership;
}

// PREFIX/share/trainyard/dashboard for the PREFIX/bin this daemon runs from.
fs::path installed_dashboard_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path().parent_path() / TRAINYARD_DASHBOARD_RELDIR;
}

// The dashboard from --dashboard-dir, else the installed one; none (logged) when neither is there,
// so a daemon installed without the dashboard still serves the API.
std::optional<DashboardFiles> dashboard_files(const std::string& configured) {
  if (!configured.empty()) return DashboardFiles::load(configured);
  const fs::path installed = installed_dashboard_dir();
  if (!installed.empty() && fs::is_regular_file(installed / "index.html")) return DashboardFiles::load(installed);
  spdlog::info("event=dashboard_off reason=\"no --dashboard-dir and nothing installed at {}\"", installed.string());
  return std::nullopt;
}

}  // namespace

bool parse_daemon_options(int argc, const char* const* argv, DaemonOptions& o) {
  FlagParser flags("trainyard-daemon", "Trainyard control plane: REST API, agent gateway, scheduler, SQLite store.",
                   "TRAINYARD_DAEMON_");
  flags.add_string("listen", "HOST:PORT to serve the API and agent gateway on; port 0 picks a free port", &o.listen);
  flags.add_string("data-dir", "directory for the database, tokens and daemon.addr", &o.data_dir, true);
  flags.add_string("store", "where jobs and everything else are stored: sqlite://PATH (default: "
                   "sqlite://DATA_DIR/trainyard.db) or postgresql://USER@HOST/DB?...", &o.store);
  flags.add_string("advertise-url", "the URL clients and agents reach this daemon at, which a standby redirects "
                   "them to while this one is active (default: http[s]://LISTEN as bound)", &o.advertise_url);
  flags.add_duration<Millis>("lease-ttl-ms",
                             "with a postgresql store: how long the active daemon's lease lasts "
                             "unrenewed (it renews every ttl/5); a standby takes over within about this after the "
                             "active one dies",
                             &o.lease_ttl, 500, 600'000);
  flags.add_bool("insecure-http", "allow plain HTTP on a non-loopback --listen address (tokens in clear text)",
                 &o.insecure_http);
  flags.add_string("checkpoint-root", "directory every agent can reach for checkpoints (default DATA_DIR/checkpoints)",
                   &o.checkpoint_root);
  flags.add_string("dashboard-dir", "the dashboard's built files (web/dist), served on the API's port; default: "
                   "PREFIX/" TRAINYARD_DASHBOARD_RELDIR " beside PREFIX/bin/trainyard-daemon when it holds index.html, "
                   "else no dashboard", &o.dashboard_dir);
  flags.add_bool("metrics-public",
                 "serve GET /metrics (Prometheus) without a token; otherwise it needs an admin, "
                 "operator or viewer token",
                 &o.metrics_public);
  flags.add_duration<Millis>("shutdown-grace-ms",
                             "on SIGTERM or SIGINT, how long requests in flight may take to be answered before the "
                             "daemon tells its agents it is going away and exits (a second signal exits at once)",
                             &o.shutdown_grace, 0, 3'600'000);
  flags.add_duration<std::chrono::seconds>("history-interval-s",
                                           "how often the cluster is sampled for its history "
                                           "over days (the dashboard's overview charts, GET /v1/cluster/history; kept "
                                           "8 days); 0: never",
                                           &o.history_interval, 0, 3600);
  flags.add_duration<std::chrono::days>("event-retention-days",
                                        "events older than this are deleted (those a webhook "
                                        "has not had yet are kept)",
                                        &o.event_retention, 1, 36'500);
  // Below the connection's 60 s idle timeout, which each write restarts.
  flags.add_duration<Millis>("sse-keepalive-ms", "how often GET /v1/events/stream sends a keep-alive comment",
                             &o.sse_keepalive, 100, 50'000);
  flags.add_duration<Millis>("sse-flush-ms", "how long GET /v1/events/stream holds live events to send them together",
                             &o.sse_flush, 0, 1000);
  net::add_server_flags(flags, o.server);
  add_job_manager_flags(flags, o.job_manager);
  scheduler::add_config_flags(flags, o.scheduler);
  add_user_limit_flags(flags, o.users);
  add_node_claim_flags(flags, o.node_claims);
  add_webhook_flags(flags, o.webhooks, o.webhook_client);
  if (!flags.parse(argc, argv)) {
    std::cout << flags.output();
    return false;
  }
  // What no single flag can check, each failing at start with the flag to change.
  split_listen(o.listen);
  check_transport_security(o);
  resolve(o.job_manager);  // the fence against the node timeout, the failure rules file, preemption
  if (!o.dashboard_dir.empty()) require_dashboard_dir(o.dashboard_dir);
  if (!o.webhooks.public_url.empty()) parse_webhook_url(o.webhooks.public_url, "--public-url");
  if (!o.advertise_url.empty()) parse_webhook_url(o.advertise_url, "--advertise-url");
  const bool postgresql =
      !o.store.empty() && store::parse_store_url(o.store).kind == store::StoreUrl::Kind::postgresql;  // names the field
  if (flags.given("lease-ttl-ms") && !postgresql) {
    throw InvalidInput("--lease-ttl-ms",
                       "only with a postgresql:// --store: a SQLite store serves one daemon, always active, with no lease");
  }
  return true;
}

int run_daemon(const DaemonOptions& o) {
  const auto [host, port] = split_listen(o.listen);
  const fs::path data_dir = o.data_dir;
  JobManagerConfig jm = resolve(o.job_manager);
  // Every launch names it to agents, which run from other directories and take only a plain absolute path.
  fs::path plain_checkpoint_root =
      fs::absolute(o.checkpoint_root.empty() ? data_dir / "checkpoints" : fs::path(o.checkpoint_root)).lexically_normal();
  if (!plain_checkpoint_root.has_filename()) plain_checkpoint_root = plain_checkpoint_root.parent_path();  // "dir/"
  const std::string checkpoint_root = plain_checkpoint_root.string();
  fs::create_directories(data_dir);
  fs::create_directories(checkpoint_root);
  // A command job runs as its own account and must reach its job-N directory (0700, its account's):
  // the root, and the data dir holding it by default, can be traversed but not listed.
  const auto traversable = fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec;
  make_private(data_dir, o.checkpoint_root.empty() ? traversable : fs::perms::owner_all);
  make_private(checkpoint_root, traversable);
  const store::StoreUrl store_url =
      o.store.empty() ? store::StoreUrl{store::StoreUrl::Kind::sqlite, (data_dir / "trainyard.db").string()} : store::parse_store_url(o.store);
  if (store_url.kind == store::StoreUrl::Kind::sqlite) {
    for (const char* suffix : {"", "-wal", "-shm"}) {
      make_private(store_url.target + suffix, fs::perms::owner_read | fs::perms::owner_write);
    }
  }

  asio::io_context io(1);
  SystemTimeSource clock;
  const std::unique_ptr<store::Store> opened_store = store::open_store(store_url);
  store::Store& store = *opened_store;
  Leadership leadership = take_leadership(store, store_url, o, jm.fence_after, host, port, data_dir);
  TokenRegistry tokens;
  const bool fresh_store = store.tokens().empty();
  ensure_bootstrap_token(store, tokens, data_dir / "admin.token", "admin", store::Role::admin, clock.system_now(), fresh_store);
  ensure_bootstrap_token(store, tokens, data_dir / "join.token", kJoinTokenUser, store::Role::agent, clock.system_now(), fresh_store);
  for (const auto& token : store.tokens()) tokens.add(token);
  const store::LoadedState state = store.load();
  const std::string cluster = store.cluster_name();
  if (!valid_cluster_name(cluster)) {
    throw InvalidInput("--store", "the database's cluster name (table cluster_identity) is not up to " +
                                      std::to_string(kMaxClusterNameChars) + " lowercase hex digits");
  }
  // The jobs of another database beside this one (a new database keeping the old files, or another
  // cluster on the same --checkpoint-root) have job directories of the same names in their own.
  const std::string cluster_checkpoints =
      cluster.empty() ? checkpoint_root : (plain_checkpoint_root / ("cluster-" + cluster)).string();
  fs::create_directories(cluster_checkpoints);
  make_private(cluster_checkpoints, traversable);
  spdlog::info("event=cluster name={} checkpoint_dir={}", cluster.empty() ? "none" : cluster,
               cluster_checkpoints);

  DaemonMetrics metrics;  // before the store worker, whose thread records into it until it stops
  StoreWorker worker(store, [&io](StoreWorker::Continuation fn) { asio::post(io, std::move(fn)); });
  worker.set_lease_lost_handler([](const std::string& reason) { exit_on_lease_lost(reason); });
  worker.set_commit_observer([&metrics](double seconds, std::size_t changes) { metrics.store_commit(seconds, changes); });
  // Before the first write, so GET /v1/events/stream hears of every event committed from here;
  // the observer runs on the I/O thread, which starts after the API that sets it exists.
  const std::int64_t event_head = store.last_event_seq();
  std::function<void(const std::vector<store::Event>&)> publish_events;
  worker.set_events_observer(event_head, [&publish_events](const std::vector<store::Event>& events) { publish_events(events); });
  FileWorker files([&io](FileWorker::Continuation fn) { asio::post(io, std::move(fn)); });
  net::SteadyTimers steady_timers(io);
  PauseTolerantTimers timers(steady_timers, clock, pause_threshold(o.job_manager.config.tick));
  scheduler::Scheduler scheduler(o.scheduler);
  jm.daemon_version = kTrainyardVersion;
  jm.checkpoint_root = cluster_checkpoints;
  jm.cluster_name = cluster;
  JobManager jobs(worker, files, clock, timers, jm, scheduler);
  jobs.set_metrics(&metrics);
  metrics.watch(jobs, clock);
  // Pending jobs' dependencies on jobs that ended before the restart are judged by their records.
  std::vector<JobId> depended_on;
  for (const Job& job : state.active_jobs) {
    for (const Dependency& d : job.spec.depends_on) depended_on.push_back(d.job);
  }
  jobs.remember_jobs(store::jobs_depended_on(store, depended_on));
  jobs.restore(state);

  AgentGateway gateway(jobs, tokens, worker, clock, !o.server.tls.client_ca_file.empty());
  gateway.set_node_claim_limits(o.node_claims);
  Api api(jobs, worker, files, tokens, clock, timers, kTrainyardVersion, cluster_checkpoints, o.users,
          data_dir / "join.token");
  api.set_metrics_exposition([&metrics] { return metrics.render(); }, o.metrics_public);
  api.set_history_interval(o.history_interval);
  std::optional<ClusterSampler> history;
  if (o.history_interval.count() > 0) history.emplace(worker, jobs, metrics, o.history_interval);
  if (auto dashboard = dashboard_files(o.dashboard_dir)) api.set_dashboard(std::move(*dashboard));
  api.event_streams().set_head(event_head);
  api.event_streams().set_flush_window(o.sse_flush);
  publish_events = [&api](const std::vector<store::Event>& events) { api.event_streams().publish(events); };
  api.set_request_observer([&metrics](const std::string& method, const std::string& route, int status, double seconds) {
    metrics.http_request(method, route, status, seconds);
  });
  WebhookRegistry webhooks(state.webhooks, state.max_webhook_id);
  net::HttpClientOptions webhook_client_options = o.webhook_client;
  webhook_client_options.check_address = [](const std::string&, const std::string& address) {
    return is_public_address(address) ? std::string() : address + " is loopback, link-local, private or reserved";
  };
  net::HttpClient webhook_client(io, webhook_client_options);
  WebhookOutbox outbox(
      worker, timers, clock, o.webhooks,
      [&webhook_client](net::OutboundRequest request, std::function<void(net::OutboundResponse)> done) {
        webhook_client.post(std::move(request), std::move(done));
      },
      metrics.registry());
  outbox.start(webhooks);
  api.set_webhooks(webhooks, o.webhooks);
  const net::HttpServerOptions& server_options = o.server;
  net::HttpServer server(io, server_options, [&api](net::HttpRequest req, net::HttpResponder respond) {
    api.handle(std::move(req), std::move(respond));
  }, {gateway.route()});
  server.identify_callers([&tokens, &clock](std::string_view authorization) -> std::optional<net::Caller> {
    const std::optional<Principal> who = tokens.authenticate_header(authorization, clock.system_now());
    if (!who) return std::nullopt;
    return connection_caller(*who);
  });
  // What a graceful shutdown waits for; also how a test knows its slow request is being handled.
  metrics.registry().add_collector([&server, &api](prom::TextWriter& out) {
    out.gauge("trainyard_http_requests_in_flight", "HTTP requests read and not yet answered.", {},
              {{{}, static_cast<double>(server.requests_in_flight())}});
    out.gauge("trainyard_sse_clients", "Clients reading GET /v1/events/stream.", {},
              {{{}, static_cast<double>(api.event_streams().clients())}});
  });
  // New connections take the reloaded certificate; open ones and running jobs carry on. Handled
  // before daemon.addr appears, so that nobody can send a SIGHUP that would still end the daemon.
  asio::signal_set reload_signal(io, SIGHUP);
  std::function<void()> await_reload = [&] {
    reload_signal.async_wait([&](const boost::system::error_code& ec, int) {
      if (ec) return;
      if (!server_options.tls.enabled()) {
        spdlog::info("event=tls_reload_skipped reason=\"no --tls-cert: the daemon speaks plain HTTP\"");
      } else if (const Result<void> reloaded = server.reload_tls(); reloaded) {
        spdlog::info("event=tls_reloaded cert={} key={}", o.server.tls.cert_file, o.server.tls.key_file);
      } else {
        spdlog::error("event=tls_reload_failed field={} error=\"{}\" kept=\"the certificate loaded before\"",
                      reloaded.error().field, reloaded.error().message);
      }
      await_reload();
    });
  };
  await_reload();
  const unsigned short bound = server.listen(host, leadership.port);
  const std::string url = listening_url(server_options.tls.enabled(), host, bound);
  if (leadership.advertise_url.empty()) leadership.advertise_url = url;
  leadership.lease.active_url = leadership.advertise_url;
  api.set_lease(leadership.lease);
  if (leadership.kept) {
    api.set_store_health([&leadership, &clock] { return leadership.kept->store_problem(clock.monotonic_now()); });
  }
  write_file_atomically(data_dir / "daemon.addr", url + "\n", 0644);
  spdlog::info(
      "event=daemon_listening url={} data_dir={} version={} agent_client_certificates={} role=active epoch={} "
      "advertise_url={}",
      url, data_dir.string(), kTrainyardVersion, o.server.tls.client_ca_file.empty() ? "no" : "required",
      leadership.lease.epoch, leadership.advertise_url);

  asio::steady_timer ticker(io);
  std::uint64_t ticks = 0;
  // Set once the lease timer first checked the lease (a renewal had its chance, so a long start-up
  // is not taken for a lost lease).
  bool lease_watched = false;
  bool store_unreachable = false;
  std::function<void()> tick = [&] {
    // A tick after a pause longer than the lease acts on nothing: the lease may be another's now.
    if (leadership.kept && lease_watched) {
      if (const Result<void> held = leadership.kept->still_held(clock.monotonic_now()); !held) {
        exit_on_lease_lost(held.error().message);
      }
      // Once per episode: the store stopped answering, and GET /healthz says so until it answers.
      const std::optional<std::string> problem = leadership.kept->store_problem(clock.monotonic_now());
      if (problem && !store_unreachable) spdlog::error("event=store_unreachable reason=\"{}\"", *problem);
      if (!problem && store_unreachable) spdlog::info("event=store_reachable_again epoch={}", leadership.lease.epoch);
      store_unreachable = problem.has_value();
    }
    jobs.tick();
    if (history) history->tick(clock.system_now(), clock.monotonic_now());
    api.event_streams().keep_alive(clock.monotonic_now(), o.sse_keepalive);
    if (++ticks % 20 == 0) {
      jobs.persist_usage();
      persist_token_uses(tokens, worker, clock.monotonic_now());
      metrics.account_goodput(worker, clock.system_now());
      prune_events(worker, clock.system_now(), o.event_retention);
    }
    ticker.expires_after(o.job_manager.config.tick);
    ticker.async_wait([&](const boost::system::error_code& ec) {
      if (!ec) tick();
    });
  };
  tick();

  // The active daemon renews its lease every ttl/5, through the store worker (one connection, one
  // thread), and ends when a renewal finds it lost or none is confirmed within the ttl.
  asio::steady_timer lease_timer(io);
  bool renewing = false;
  std::function<void()> keep_lease = [&] {
    ActiveLease& kept = *leadership.kept;
    if (!renewing) {
      renewing = true;
      const MonoTime sent_at = clock.monotonic_now();
      worker.read(
          [&, sent_at](store::Store& s) -> StoreWorker::Continuation {
            const std::optional<store::LeaseState> answer =
                s.acquire_or_renew(leadership.holder, leadership.advertise_url, o.lease_ttl);
            return [&leadership, &renewing, sent_at, answer] {
              renewing = false;
              const Result<void> held = leadership.kept->renewed(sent_at, answer.value_or(store::LeaseState{}));
              if (!held) exit_on_lease_lost(held.error().message);
            };
          },
          [&renewing](const Error& error) {
            renewing = false;
            spdlog::warn("event=lease_renewal_failed error=\"{}\"", error.message);
          });
    }
    lease_timer.expires_after(kept.renew_every());
    lease_timer.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      // Checked only once a renewal had its chance: a long start-up with nobody taking over renews.
      lease_watched = true;
      if (const Result<void> held = leadership.kept->still_held(clock.monotonic_now()); !held) {
        exit_on_lease_lost(held.error().message);
      }
      keep_lease();
    });
  };
  if (leadership.kept) keep_lease();

  GracefulShutdown shutdown(io, server, worker, o.shutdown_grace, [&] {
    ticker.cancel();
    jobs.closing_agent_connections();
    outbox.stop();
    jobs.persist_usage();
    persist_token_uses(tokens, worker, clock.monotonic_now());
  });
  io.run();
  return 0;
}

}  // namespace trainyard::daemon
