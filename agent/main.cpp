// trainyard-agent: one per node. Thin main over the agent library: flags, the simulated device,
// the data-plane server, the agent service, signals.
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <fstream>
#include <iostream>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "agent/agent.h"
#include "agent/fence_keeper_process.h"
#include "agent/simulated_rank_process.h"
#include "net/server_list.h"
#include "net/steady_timers.h"
#include "net/tls.h"
#include "net/url.h"
#include "neuron/tcp_socket.h"
#include "proto/contained_path.h"
#include "proto/flag_parser.h"
#include "proto/json_reader.h"

namespace {

using trainyard::InvalidInput;

struct Flags {
  std::string server;
  std::string join_token_file;
  std::string name;
  std::int64_t cores = 32;
  std::int64_t memory_mb = 0;
  std::string work_dir;
  std::string checkpoint_root;
  std::vector<std::string> labels;
  std::vector<std::string> faults;
  std::string data_listen = "127.0.0.1:0";
  std::int64_t collective_timeout_ms = 30000;
  std::int64_t seed = 0;
  std::string job_user;
  std::string user_map;
  bool allow_root_jobs = false;
  std::int64_t job_uid_base = trainyard::agent::JobUidRange{}.first;
  std::int64_t job_uid_count = trainyard::agent::JobUidRange{}.count;
  std::int64_t job_pids_max = 4096;
  std::string ca_file;
  std::string tls_cert;
  std::string tls_key;
};

std::string read_token(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidInput("--join-token-file", "cannot read " + path);
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) throw InvalidInput("--join-token-file", path + " is empty");
  return token;
}

trainyard::agent::JobAccounts job_accounts(const Flags& f) {
  trainyard::agent::JobAccountOptions options;
  options.job_uids = {static_cast<std::uint32_t>(f.job_uid_base), static_cast<std::uint32_t>(f.job_uid_count)};
  const bool root = ::geteuid() == 0;
  if (!root) {
    if (!f.job_user.empty() || !f.user_map.empty()) {
      spdlog::warn("event=job_accounts_ignored reason=\"the agent is not root and cannot switch accounts\"");
    }
    return trainyard::agent::JobAccounts(options, false);
  }
  if (!f.job_user.empty()) options.job_user = f.job_user;
  if (!f.user_map.empty()) options.user_map = trainyard::agent::read_user_map(f.user_map);
  options.allow_root_jobs = f.allow_root_jobs;
  return trainyard::agent::JobAccounts(options, true);
}

// Job accounts must reach their own attempt directories, and list nothing else: the work dir and
// attempts/ are traversable (0711); the node's credential and records in it stay 0600.
void prepare_work_dir(const std::string& work_dir) {
  namespace fs = std::filesystem;
  const auto traversable = fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec;
  fs::create_directories(work_dir + "/attempts");
  fs::permissions(work_dir, traversable, fs::perm_options::replace);
  fs::permissions(work_dir + "/attempts", traversable, fs::perm_options::replace);
}

// The daemons of --server URL1,URL2,...: each a URL, all over TLS or none, without a trailing '/'.
std::vector<std::string> server_list(const std::string& text) {
  std::vector<std::string> servers = trainyard::net::split_server_list(text, "--server");
  const std::string scheme = trainyard::net::parse_url(servers.front(), "--server").scheme;
  for (auto& server : servers) {
    if (trainyard::net::parse_url(server, "--server").scheme != scheme) {
      throw InvalidInput("--server", "mixes http:// and https:// URLs (" + servers.front() + ", " + server +
                                         "): the daemons of one cluster are all reached the same way");
    }
    while (!server.empty() && server.back() == '/') server.pop_back();
  }
  return servers;
}

// What the kernel says the host has (MemTotal), which is what a job's cgroup limit can at most give.
std::int64_t host_memory_mb() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<std::int64_t>(pages) * page_size / (1024 * 1024);
}

trainyard::agent::AgentConfig build_config(const Flags& f, trainyard::FaultPlan& faults) {
  trainyard::agent::AgentConfig c;
  c.servers = server_list(f.server);
  const bool tls = c.servers.front().starts_with("https://");
  if (tls) {
    c.tls = trainyard::net::make_client_tls_context({f.ca_file, "--ca-file", f.tls_cert, f.tls_key});
  } else if (!f.ca_file.empty() || !f.tls_cert.empty() || !f.tls_key.empty()) {
    throw InvalidInput(f.ca_file.empty() ? (f.tls_cert.empty() ? "--tls-key" : "--tls-cert") : "--ca-file",
                       "is for TLS: give an https:// --server");
  }
  c.join_token = read_token(f.join_token_file);
  trainyard::check_name("--name", f.name);
  c.name = f.name;
  c.cores = static_cast<int>(f.cores);
  c.memory_mb = f.memory_mb;
  c.work_dir = f.work_dir;
  std::string checkpoint_root = f.checkpoint_root;
  while (checkpoint_root.size() > 1 && checkpoint_root.back() == '/') checkpoint_root.pop_back();
  if (!checkpoint_root.empty()) c.checkpoint_root = trainyard::plain_absolute_path(checkpoint_root, "--checkpoint-root");
  for (const auto& label : f.labels) {
    const auto eq = label.find('=');
    if (eq == std::string::npos || eq == 0) throw InvalidInput("--label", "must be KEY=VALUE, got \"" + label + "\"");
    c.labels[label.substr(0, eq)] = label.substr(eq + 1);
  }
  trainyard::check_labels("--label", c.labels);
  for (const auto& spec : f.faults) trainyard::apply_fault_spec(faults, spec, c.cores);
  c.collective_timeout = std::chrono::milliseconds(f.collective_timeout_ms);
  c.job_accounts = job_accounts(f);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  // Attempt logs, progress files and the agent's records are nobody else's to read.
  ::umask(077);
  // Not flags of the agent: the agent starts its own binary this way for each simulated rank, and
  // for its fence keeper.
  if (argc == 2 && std::string_view(argv[1]) == trainyard::agent::kSimulatedRankFlag) {
    return trainyard::agent::run_simulated_rank(3);
  }
  if (argc == 2 && std::string_view(argv[1]) == trainyard::agent::kFenceKeeperFlag) {
    return trainyard::agent::run_fence_keeper(3);
  }
  Flags f;
  trainyard::FlagParser flags("trainyard-agent", "Trainyard node agent with a simulated Trainium device.",
                              "TRAINYARD_AGENT_");
  flags.add_string("server",
                   "daemon URL, e.g. http://127.0.0.1:8080; https:// connects over TLS (wss); several, comma-separated "
                   "(active / standby daemons), are tried in turn",
                   &f.server, true);
  flags.add_string("ca-file", "PEM CA file that verifies an https:// daemon (default: the system's trust store)",
                   &f.ca_file);
  flags.add_string("tls-cert", "PEM client certificate to present to the daemon (mutual TLS; it names this node)",
                   &f.tls_cert);
  flags.add_string("tls-key", "PEM private key of --tls-cert", &f.tls_key);
  flags.add_string("join-token-file", "file holding the daemon's join token", &f.join_token_file, true);
  flags.add_string("name", "node name", &f.name, true);
  flags.add_int("cores", "NeuronCores of the simulated node", &f.cores, 1, 4096);
  flags.add_int("memory-mb",
                "MiB of memory this node offers jobs (default: the host's physical memory); jobs asking more are "
                "refused, and a job's memory_mb is its cgroup's limit",
                &f.memory_mb, 0, 1LL << 40);
  flags.add_string("work-dir", "directory for attempt logs and files, and the node's own credential (keep it)",
                   &f.work_dir, true);
  flags.add_string("checkpoint-root",
                   "absolute directory launches may name checkpoints under (the daemon's --checkpoint-root as this "
                   "node sees it); without it, any absolute path without '..'",
                   &f.checkpoint_root);
  flags.add_list("label", "KEY=VALUE node label, e.g. rack=r1", &f.labels);
  flags.add_list("fault", "inject a fault: core:N=corrupt|hang|crash|slow:K, node=slow:K, link=throttle:RATE, link=drop", &f.faults);
  flags.add_string("data-listen", "HOST:PORT of the data-plane (collectives) listener; port 0 picks one", &f.data_listen);
  flags.add_int("collective-timeout-ms", "a peer silent this long fails the collective", &f.collective_timeout_ms, 10,
                3'600'000);
  flags.add_int("seed", "seed of the simulated device's stochastic rounding", &f.seed, 0, INT64_MAX);
  flags.add_string("job-user",
                   "one Unix account every command job of an unmapped user runs as, shared by all of them (default: "
                   "each job its own uid, see --job-uid-base)",
                   &f.job_user);
  flags.add_int("job-uid-base", "uid of job 0's own account; job J runs as BASE + J, attempt A with gid BASE + COUNT + A mod COUNT", &f.job_uid_base, 1,
                0xFFFFFFFE);
  flags.add_int("job-uid-count", "how many per-job uids from --job-uid-base (and attempt gids after them); a job id past them is refused at launch",
                &f.job_uid_count, 1, 0xFFFFFFFE);
  flags.add_int("job-pids-max", "processes and threads each attempt may have at once (its cgroup's pids.max)",
                &f.job_pids_max, 1, 4'194'304);
  flags.add_string("user-map", "JSON file mapping Trainyard users to Unix accounts, e.g. {\"alice\": \"alice\"}; "
                   "other users' jobs run as accounts of their own (or --job-user)", &f.user_map);
  flags.add_bool("allow-root-jobs", "let command jobs run as root (without --job-user: as the agent, root)",
                 &f.allow_root_jobs);
  trainyard::FaultPlan faults;
  trainyard::agent::AgentConfig config;
  trainyard::neuron::HostPort data_listen;
  try {
    if (!flags.parse(argc, argv)) {
      std::cout << flags.output();
      return 0;
    }
    if (!flags.given("memory-mb")) f.memory_mb = host_memory_mb();
    config = build_config(f, faults);
    // Port 0 is allowed here (pick a free port), unlike for a peer's address.
    const auto colon = f.data_listen.rfind(':');
    if (colon == std::string::npos) throw InvalidInput("--data-listen", "must be HOST:PORT");
    data_listen = colon + 2 == f.data_listen.size() && f.data_listen.back() == '0'
                      ? trainyard::neuron::HostPort{f.data_listen.substr(0, colon), 0}
                      : trainyard::neuron::parse_host_port(f.data_listen, "--data-listen");
  } catch (const InvalidInput& e) {
    std::cerr << "trainyard-agent: " << e.what() << "\n(see trainyard-agent --help)\n";
    return 2;
  }
  try {
    prepare_work_dir(config.work_dir);
    trainyard::neuron::NeuronDevice device(static_cast<int>(f.cores), static_cast<std::uint64_t>(f.seed));
    device.set_faults(faults);
    trainyard::neuron::DataPlaneServer data_plane(data_listen, {});
    config.data_addr = data_listen.host + ":" + std::to_string(data_plane.port());
    spdlog::info("event=agent_starting node={} cores={} memory_mb={} data_addr={} servers={}", config.name, config.cores,
                 config.memory_mb, config.data_addr, fmt::join(config.servers, ","));
    spdlog::info("event=job_account node={} agent_uid={} jobs_run_as=\"{}\"", config.name, ::geteuid(),
                 config.job_accounts.describe());
    auto cgroups = trainyard::agent::Cgroups::set_up(
        "/sys/fs/cgroup", trainyard::agent::agent_cgroup_name(config.name, config.work_dir), f.job_pids_max);
    config.cgroups = cgroups.describe();
    if (cgroups.available()) {
      spdlog::info("event=cgroups node={} cgroups={} parent={} pids_max={}", config.name, config.cgroups,
                   cgroups.parents().front(), cgroups.pids_max());
    } else {
      spdlog::warn("event=cgroups node={} cgroups=\"{}\" fallback=\"process groups, no limits\"", config.name,
                   config.cgroups);
    }
    boost::asio::io_context io(1);
    // What a previous life of this agent left running is not ours to run: kill it before connecting.
    trainyard::agent::ProcessRegistry processes(config.work_dir + "/processes");
    if (const int killed = processes.kill_leftovers(); killed > 0) {
      spdlog::warn("event=leftovers_of_previous_run node={} process_groups={}", config.name, killed);
    }
    if (const int removed = cgroups.remove_leftovers(); removed > 0) {
      spdlog::warn("event=leftovers_of_previous_run node={} cgroups={}", config.name, removed);
    }
    trainyard::agent::WebSocketDaemonLinks links(io, config.tls);
    trainyard::agent::LocalWorkloads workloads(io, device, data_plane, processes, config.job_accounts,
                                               std::move(cgroups), config.collective_timeout);
    trainyard::net::SteadyTimers timers(io);
    trainyard::agent::ProcessFenceKeeper keeper(
        io, {config.name, config.work_dir + "/processes", "/sys/fs/cgroup",
             trainyard::agent::agent_cgroup_name(config.name, config.work_dir)});
    trainyard::agent::Agent agent(io, config, device, {links, workloads, timers, &keeper});
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int) {
      if (!ec) agent.shutdown(std::chrono::milliseconds(5000));
    });
    agent.start();
    io.run();
    if (!agent.fatal_error().empty()) {
      std::cerr << "trainyard-agent: " << agent.fatal_error() << "\n";
      return 3;
    }
    return 0;
  } catch (const std::exception& e) {
    spdlog::critical("event=agent_failed error=\"{}\"", e.what());
    return 1;
  }
}
