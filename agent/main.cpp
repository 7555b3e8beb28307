// trainyard-agent: one per node. Thin main over the agent library: flags, the simulated device,
// the data-plane server, the agent service, signals.
#include <sys/stat.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <fstream>
#include <iostream>
#include <spdlog/spdlog.h>

#include "agent/agent.h"
#include "agent/neuron/tcp_socket.h"
#include "net/http_types.h"
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
  std::vector<std::string> labels;
  std::vector<std::string> faults;
  std::string data_listen = "127.0.0.1:0";
  std::int64_t collective_timeout_ms = 30000;
  std::int64_t seed = 0;
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

trainyard::agent::AgentConfig build_config(const Flags& f, trainyard::neuron::FaultPlan& faults) {
  trainyard::agent::AgentConfig c;
  trainyard::net::parse_url(f.server, "--server");
  c.server = f.server;
  while (!c.server.empty() && c.server.back() == '/') c.server.pop_back();
  c.join_token = read_token(f.join_token_file);
  trainyard::check_name("--name", f.name);
  c.name = f.name;
  c.cores = static_cast<int>(f.cores);
  c.memory_mb = f.memory_mb;
  c.work_dir = f.work_dir;
  for (const auto& label : f.labels) {
    const auto eq = label.find('=');
    if (eq == std::string::npos || eq == 0) throw InvalidInput("--label", "must be KEY=VALUE, got \"" + label + "\"");
    c.labels[label.substr(0, eq)] = label.substr(eq + 1);
  }
  trainyard::check_labels("--label", c.labels);
  for (const auto& spec : f.faults) trainyard::neuron::apply_fault_spec(faults, spec, c.cores);
  c.collective_timeout = std::chrono::milliseconds(f.collective_timeout_ms);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  // Attempt logs, progress files and the agent's records are nobody else's to read.
  ::umask(077);
  Flags f;
  trainyard::FlagParser flags("trainyard-agent", "Trainyard node agent with a simulated Trainium device.");
  flags.add_string("server", "daemon URL, e.g. http://127.0.0.1:8080", &f.server, true);
  flags.add_string("join-token-file", "file holding the daemon's join token", &f.join_token_file, true);
  flags.add_string("name", "node name", &f.name, true);
  flags.add_int("cores", "NeuronCores of the simulated node", &f.cores, 1, 4096);
  flags.add_int("memory-mb", "memory to report", &f.memory_mb, 0, 1LL << 40);
  flags.add_string("work-dir", "directory for attempt logs and files, and the node's own credential (keep it)",
                   &f.work_dir, true);
  flags.add_list("label", "KEY=VALUE node label, e.g. rack=r1", &f.labels);
  flags.add_list("fault", "inject a fault: core:N=corrupt|hang|crash, link=throttle:RATE, link=drop", &f.faults);
  flags.add_string("data-listen", "HOST:PORT of the data-plane (collectives) listener; port 0 picks one", &f.data_listen);
  flags.add_int("collective-timeout-ms", "a peer silent this long fails the collective", &f.collective_timeout_ms, 10,
                3'600'000);
  flags.add_int("seed", "seed of the simulated device's stochastic rounding", &f.seed, 0, INT64_MAX);
  trainyard::neuron::FaultPlan faults;
  trainyard::agent::AgentConfig config;
  trainyard::neuron::HostPort data_listen;
  try {
    if (!flags.parse(argc, argv)) {
      std::cout << flags.usage();
      return 0;
    }
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
    std::filesystem::create_directories(config.work_dir);
    trainyard::neuron::NeuronDevice device(static_cast<int>(f.cores), static_cast<std::uint64_t>(f.seed));
    device.set_faults(faults);
    trainyard::neuron::DataPlaneServer data_plane(data_listen, {});
    config.data_addr = data_listen.host + ":" + std::to_string(data_plane.port());
    spdlog::info("event=agent_starting node={} cores={} data_addr={} server={}", config.name, config.cores,
                 config.data_addr, config.server);
    boost::asio::io_context io(1);
    trainyard::agent::Agent agent(io, config, device, data_plane);
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
