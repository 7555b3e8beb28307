#include "tests/integration/host_network.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <stdexcept>

namespace trainyard::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNetnsDir = "/var/run/netns";
constexpr int kMaxHosts = 250;  // one /24, the switch holds none
// No host has it: a route through it sends packets to a neighbour that never answers, so they are
// dropped silently (a blackhole route would fail the sender's writes at once instead).
constexpr const char* kNowhere = "10.77.0.254";

// The output of `command` and whether it exited 0.
std::pair<std::string, bool> run_command(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {"popen failed", false};
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
  const int status = ::pclose(pipe);
  return {output, status == 0};
}

std::string ip_command(const std::vector<std::string>& args) {
  std::string command = "ip";
  for (const std::string& arg : args) command += " " + arg;
  return command;
}

// Namespaces named by a HostNetwork of a process that no longer runs.
void sweep_left_behind() {
  std::error_code ec;
  const std::regex ours(R"(trainyard-(\d+)-\d+-.+)");
  for (const auto& entry : fs::directory_iterator(kNetnsDir, ec)) {
    const std::string name = entry.path().filename();
    std::smatch match;
    if (!std::regex_match(name, match, ours)) continue;
    if (!process_alive(static_cast<pid_t>(std::stol(match[1])))) run_command(ip_command({"netns", "del", name}));
  }
}

void check_name(const std::string& name) {
  if (name.empty() || name.size() > 32 || !std::regex_match(name, std::regex("[A-Za-z0-9-]+"))) {
    throw std::invalid_argument("host name '" + name + "': use 1-32 letters, digits or '-'");
  }
}

}  // namespace

void run_ip(const std::vector<std::string>& args) {
  const auto [output, ok] = run_command(ip_command(args));
  if (!ok) throw std::runtime_error(ip_command(args) + " failed: " + output);
}

std::optional<std::string> HostNetwork::unavailable() {
  if (::geteuid() != 0) return "building hosts out of network namespaces needs root";
  const std::string probe = "trainyard-" + std::to_string(::getpid()) + "-0-probe";
  const auto [output, ok] = run_command(ip_command({"netns", "add", probe}));
  if (!ok) return "ip netns add failed: " + output;
  run_command(ip_command({"netns", "del", probe}));
  return std::nullopt;
}

HostNetwork::HostNetwork() {
  static std::atomic<int> networks{0};
  prefix_ = "trainyard-" + std::to_string(::getpid()) + "-" + std::to_string(++networks) + "-";
  sweep_left_behind();
  switch_ = prefix_ + "switch";
  run_ip({"netns", "add", switch_});
  run_ip({"-n", switch_, "link", "add", "br0", "type", "bridge"});
  run_ip({"-n", switch_, "link", "set", "br0", "up"});
}

HostNetwork::~HostNetwork() {
  if (original_netns_ >= 0) {
    ::setns(original_netns_, CLONE_NEWNET);
    ::close(original_netns_);
  }
  for (const auto& [name, h] : hosts_) run_command(ip_command({"netns", "del", h.netns}));
  run_command(ip_command({"netns", "del", switch_}));
}

std::string HostNetwork::add_host(const std::string& name) {
  check_name(name);
  if (hosts_.contains(name)) throw std::invalid_argument("host " + name + " exists already");
  if (static_cast<int>(hosts_.size()) >= kMaxHosts) throw std::length_error("a HostNetwork holds at most 250 hosts");
  const int index = static_cast<int>(hosts_.size()) + 1;
  Host h{prefix_ + name, "10.77.0." + std::to_string(index), "h" + std::to_string(index)};
  run_ip({"netns", "add", h.netns});
  hosts_.emplace(name, h);  // from here on the destructor deletes it
  run_ip({"-n", h.netns, "link", "set", "lo", "up"});
  run_ip({"-n", switch_, "link", "add", h.port, "type", "veth", "peer", "name", "eth0", "netns", h.netns});
  run_ip({"-n", switch_, "link", "set", h.port, "master", "br0"});
  run_ip({"-n", switch_, "link", "set", h.port, "up"});
  run_ip({"-n", h.netns, "addr", "add", h.address + "/24", "dev", "eth0"});
  run_ip({"-n", h.netns, "link", "set", "eth0", "up"});
  return h.address;
}

const HostNetwork::Host& HostNetwork::host(const std::string& name) const {
  auto it = hosts_.find(name);
  if (it == hosts_.end()) throw std::invalid_argument("no host " + name);
  return it->second;
}

const std::string& HostNetwork::address(const std::string& name) const { return host(name).address; }

std::string HostNetwork::netns_path(const std::string& name) const { return std::string(kNetnsDir) + "/" + host(name).netns; }

std::string HostNetwork::ip_on(const std::string& name, const std::vector<std::string>& args) const {
  std::vector<std::string> all{"-n", host(name).netns};
  all.insert(all.end(), args.begin(), args.end());
  const auto [output, ok] = run_command(ip_command(all));
  if (!ok) throw std::runtime_error(ip_command(all) + " failed: " + output);
  return output;
}

void HostNetwork::enter(const std::string& name) {
  const int target = ::open(netns_path(name).c_str(), O_RDONLY | O_CLOEXEC);
  if (target < 0) throw std::runtime_error("cannot open " + netns_path(name));
  if (original_netns_ < 0) original_netns_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  const int rc = ::setns(target, CLONE_NEWNET);
  ::close(target);
  if (rc != 0) throw std::runtime_error("setns into " + name + " failed");
}

void HostNetwork::cut(const std::string& name) { run_ip({"-n", switch_, "link", "set", host(name).port, "down"}); }

void HostNetwork::heal(const std::string& name) { run_ip({"-n", switch_, "link", "set", host(name).port, "up"}); }

void HostNetwork::drop(const std::string& from, const std::string& to) {
  run_ip({"-n", host(from).netns, "route", "add", address(to) + "/32", "via", kNowhere});
}

void HostNetwork::undrop(const std::string& from, const std::string& to) {
  run_ip({"-n", host(from).netns, "route", "del", address(to) + "/32", "via", kNowhere});
}

bool process_alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace trainyard::testing
