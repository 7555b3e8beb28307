// trainyard-agent: one per node. Thin main over the agent library: its settings (agent/agent_flags.h),
// the simulated device, the data-plane server, the agent service, signals.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <fmt/ranges.h>
#include <iostream>
#include <spdlog/spdlog.h>

#include "agent/agent.h"
#include "agent/agent_flags.h"
#include "agent/fence_keeper_process.h"
#include "agent/job_python.h"
#include "agent/job_reach.h"
#include "agent/node_credential.h"
#include "agent/simulated_rank_process.h"
#include "net/steady_timers.h"
#include "net/tls.h"
#include "neuron/tcp_socket.h"
#include "proto/errors.h"
#include "proto/flag_parser.h"

namespace {

// Job accounts must reach their own attempt directories, and list nothing else: the work dir,
// attempts/ and any directory above them made here are traversable (0711); the node's credential
// and records in the work dir stay 0600. Each is born 0711, umask aside (main is single-threaded
// here): made 0700 and opened up after, a parent that agents started together share (the local
// cluster's agents/) was seen 0700 by the other agent's reach check, which refused to start.
void prepare_work_dir(const std::string& work_dir) {
  namespace fs = std::filesystem;
  const auto traversable = fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec;
  const mode_t umask_before = ::umask(0);
  fs::path made;
  for (const auto& part : fs::path(work_dir + "/attempts")) {
    made /= part;
    if (::mkdir(made.c_str(), 0711) != 0 && errno != EEXIST) {
      const int error = errno;
      ::umask(umask_before);
      throw fs::filesystem_error("cannot make the work directory", made, std::error_code(error, std::generic_category()));
    }
  }
  ::umask(umask_before);
  fs::permissions(work_dir, traversable, fs::perm_options::replace);
  fs::permissions(work_dir + "/attempts", traversable, fs::perm_options::replace);
}

// The fence keeper runs from "/": the agent's TLS files as they are found from where it started.
trainyard::net::TlsClientFiles absolute_paths(trainyard::net::TlsClientFiles files) {
  for (std::string* path : {&files.ca_file, &files.cert_file, &files.key_file}) {
    if (!path->empty()) *path = std::filesystem::absolute(*path).string();
  }
  return files;
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
  trainyard::agent::AgentSettings settings;
  trainyard::FlagParser flags("trainyard-agent", "Trainyard node agent with a simulated Trainium device.",
                              "TRAINYARD_AGENT_");
  trainyard::agent::add_agent_flags(flags, settings);
  trainyard::FaultPlan faults;
  trainyard::agent::AgentConfig config;
  trainyard::neuron::HostPort data_listen;
  try {
    if (!flags.parse(argc, argv)) {
      std::cout << flags.output();
      return 0;
    }
    if (!flags.given("memory-mb")) settings.memory_mb = trainyard::agent::host_memory_mb();
    config = trainyard::agent::agent_config(settings, ::geteuid() == 0);
    faults = trainyard::neuron::fault_plan(settings.node);
    data_listen = trainyard::neuron::data_listen_address(settings.node);
  } catch (const trainyard::InvalidInput& e) {
    std::cerr << "trainyard-agent: " << e.what() << "\n(see trainyard-agent --help)\n";
    return 2;
  }
  try {
    prepare_work_dir(config.work_dir);
    const std::string job_python_dir = config.work_dir + "/python";
    trainyard::agent::install_job_python(job_python_dir);
    trainyard::agent::check_jobs_can_reach(config.job_accounts, "--work-dir", config.work_dir + "/attempts");
    if (!config.checkpoint_root.empty()) {
      trainyard::agent::check_jobs_can_reach(config.job_accounts, "--checkpoint-root", config.checkpoint_root);
    }
    trainyard::neuron::NeuronDevice device(settings.node.cores, settings.node.seed);
    device.set_faults(faults);
    trainyard::neuron::DataPlaneServer data_plane(data_listen, {});
    config.data_addr = data_listen.host + ":" + std::to_string(data_plane.port());
    spdlog::info("event=agent_starting node={} cores={} memory_mb={} data_addr={} servers={}", config.name, config.cores,
                 config.memory_mb, config.data_addr, fmt::join(config.servers, ","));
    spdlog::info("event=job_account node={} agent_uid={} jobs_run_as=\"{}\"", config.name, ::geteuid(),
                 config.job_accounts.describe());
    auto cgroups = trainyard::agent::Cgroups::set_up(
        "/sys/fs/cgroup", trainyard::agent::agent_cgroup_name(config.name, config.work_dir), settings.job_pids_max);
    config.cgroups = cgroups.describe();
    if (cgroups.available()) {
      spdlog::info("event=cgroups node={} cgroups={} parent={} pids_max={}", config.name, config.cgroups,
                   cgroups.parents().front(), cgroups.pids_max());
    } else {
      spdlog::warn("event=cgroups node={} cgroups=\"{}\" fallback=\"process groups, no limits\"", config.name,
                   config.cgroups);
    }
    auto network_host = trainyard::agent::JobNetworkHost::set_up(config.name);
    config.job_network = network_host.support;
    spdlog::info("event=job_network node={} job_network=\"{}\" rule_priority={}", config.name, config.job_network,
                 network_host.allow_priority);
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
                                               std::move(cgroups), config.collective_timeout, job_python_dir,
                                               std::move(network_host));
    trainyard::net::SteadyTimers timers(io);
    trainyard::agent::ProcessFenceKeeper keeper(
        io, {config.name, config.work_dir + "/processes", "/sys/fs/cgroup",
             trainyard::agent::agent_cgroup_name(config.name, config.work_dir),
             {config.servers, absolute_paths(settings.tls), trainyard::agent::node_credential_path(config.work_dir)}});
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
  } catch (const trainyard::InvalidInput& e) {
    std::cerr << "trainyard-agent: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    spdlog::critical("event=agent_failed error=\"{}\"", e.what());
    return 1;
  }
}
