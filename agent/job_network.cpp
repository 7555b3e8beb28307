#include "agent/job_network.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <stdexcept>
#include <string_view>
#include <thread>

namespace trainyard::agent {
namespace {

constexpr int kAllowPriorityBase = 18000;
constexpr int kAllowPriorities = 900;  // one per agent on a host; all below kJobNetworkProhibitPriority

struct IpResult {
  bool ok = false;
  std::string output;
};

// Runs `ip` with `args`, in the network namespace `netns_fd` when it is one. The child only makes
// system calls between fork and exec (the agent has other threads).
IpResult run_ip(const std::string& program, const std::vector<std::string>& args, int netns_fd = -1) {
  std::vector<std::string> strings{program};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {false, std::string("pipe: ") + std::strerror(errno)};
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return {false, std::string("fork: ") + std::strerror(error)};
  }
  if (pid == 0) {
    if (netns_fd >= 0 && ::setns(netns_fd, CLONE_NEWNET) != 0) ::_exit(126);
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  IpResult result;
  char buffer[4096];
  for (;;) {
    const ssize_t got = ::read(fds[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (result.output.size() < 16384) result.output.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  while (!result.output.empty() && (result.output.back() == '\n' || result.output.back() == ' ')) result.output.pop_back();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 126) result.output = "cannot enter the attempt's network namespace";
  return result;
}

std::string command_text(const std::vector<std::string>& args) {
  std::string text = "ip";
  for (const auto& a : args) text += " " + a;
  return text;
}

bool write_file(const std::string& path, std::string_view value) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool written = ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
  ::close(fd);
  return written;
}

// Runs on a thread of its own, which alone enters the new namespace (unshare takes only the
// calling thread's): the agent's other threads keep the host's network. Returns the namespace's
// fd, or -1 with `error` set.
int make_namespace(std::string& error) {
  if (::unshare(CLONE_NEWNET) != 0) {
    error = std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
    return -1;
  }
  // /proc/sys/net is the calling thread's namespace's.
  for (const char* conf : {"all", "default", "lo"}) {
    write_file(std::string("/proc/sys/net/ipv6/conf/") + conf + "/disable_ipv6", "1");
  }
  const int fd = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (fd < 0) error = std::string("opening /proc/thread-self/ns/net: ") + std::strerror(errno);
  return fd;
}

int new_namespace(std::string& error) {
  int fd = -1;
  std::thread([&] { fd = make_namespace(error); }).join();
  return fd;
}

std::string find_ip() {
  for (const char* path : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (::access(path, X_OK) == 0) return path;
  }
  return "";
}

int allow_priority_of(const std::string& node) {
  std::uint32_t hash = 2166136261u;  // FNV-1a
  for (const unsigned char c : node) hash = (hash ^ c) * 16777619u;
  return kAllowPriorityBase + static_cast<int>(hash % kAllowPriorities);
}

}  // namespace

JobNetworkHost JobNetworkHost::set_up(const std::string& node) {
  JobNetworkHost host;
  const auto unavailable = [&](const std::string& why) {
    host.support = "unavailable: " + why;
    return host;
  };
  if (::geteuid() != 0) return unavailable("the agent is not root");
  const std::string ip = find_ip();
  if (ip.empty()) return unavailable("no ip program (iproute2) in /usr/sbin, /sbin, /usr/bin or /bin");
  if (::access("/proc/sys/net/ipv4/ip_forward", W_OK) != 0) {
    return unavailable(std::string("cannot write /proc/sys/net/ipv4/ip_forward: ") + std::strerror(errno));
  }
  std::string error;
  const int probe = new_namespace(error);
  if (probe < 0) return unavailable(error);
  ::close(probe);
  host.ip_program = ip;
  host.support = kJobNetworkSupported;
  host.allow_priority = allow_priority_of(node);
  // What a previous agent of this node left (it died with attempts running): its rules name
  // addresses the daemon may give other attempts by now.
  const std::string priority = std::to_string(host.allow_priority);
  int removed = 0;
  while (removed < 100000 && run_ip(ip, {"rule", "del", "pref", priority}).ok) ++removed;
  if (removed > 0) spdlog::warn("event=job_network_rules_removed node={} priority={} rules={}", node, priority, removed);
  return host;
}

std::string host_of_address(const std::string& address) {
  if (address.starts_with('[')) {
    const auto close = address.find(']');
    return close == std::string::npos ? address : address.substr(1, close - 1);
  }
  const auto colon = address.rfind(':');
  return colon == std::string::npos ? address : address.substr(0, colon);
}

JobNetwork::JobNetwork(const JobNetworkHost& host, const JobNetworkPlan& plan, int rank,
                       const std::vector<std::string>& peers)
    : host_(host) {
  try {
    build(plan, rank, peers);
  } catch (...) {
    tear_down();
    throw;
  }
}

JobNetwork::~JobNetwork() { tear_down(); }

void JobNetwork::build(const JobNetworkPlan& plan, int rank, const std::vector<std::string>& peers) {
  if (!host_.available()) throw std::runtime_error("this agent cannot give an attempt a network of its own: " + host_.support);
  const auto run = [&](const std::vector<std::string>& args, int netns_fd = -1) {
    const IpResult result = run_ip(host_.ip_program, args, netns_fd);
    if (!result.ok) throw std::runtime_error(command_text(args) + ": " + result.output);
  };
  const Ipv4 own = plan.addresses.at(static_cast<std::size_t>(rank));
  const std::string address = ipv4_text(own);
  const std::string own_host = host_of_address(peers.at(static_cast<std::size_t>(rank)));
  // Every route to another node's rank goes through that node's address.
  std::vector<std::pair<std::string, std::string>> remote;  // (rank's address, its node's host)
  for (std::size_t r = 0; r < plan.addresses.size(); ++r) {
    if (static_cast<int>(r) == rank) continue;
    const std::string node_host = host_of_address(peers.at(r));
    if (node_host == own_host) continue;  // its own agent routes it on this host
    if (!parse_ipv4(node_host)) {
      throw std::runtime_error("rank " + std::to_string(r) + "'s node is at " + node_host +
                               ", not an IPv4 address a route can go through");
    }
    remote.emplace_back(ipv4_text(plan.addresses[r]), node_host);
  }

  std::string error;
  netns_fd_ = new_namespace(error);
  if (netns_fd_ < 0) throw std::runtime_error(error);
  host_link_ = fmt::format("tyj{:08x}", own);
  run({"link", "add", host_link_, "type", "veth", "peer", "name", kInterface, "netns",
       "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(netns_fd_)});
  undo_.push_back({"link", "del", host_link_});  // the pair, its routes and the namespace's end with it
  run({"addr", "add", address + "/32", "dev", kInterface}, netns_fd_);
  run({"link", "set", "lo", "up"}, netns_fd_);
  run({"link", "set", kInterface, "up"}, netns_fd_);
  run({"route", "add", plan.block.text(), "dev", kInterface, "scope", "link"}, netns_fd_);

  const std::string conf = "/proc/sys/net/ipv4/conf/" + host_link_;
  if (!write_file("/proc/sys/net/ipv4/ip_forward", "1") || !write_file(conf + "/proxy_arp", "1")) {
    throw std::runtime_error("cannot turn on forwarding and proxy ARP for " + host_link_ + ": " + std::strerror(errno));
  }
  write_file("/proc/sys/net/ipv6/conf/" + host_link_ + "/disable_ipv6", "1");
  run({"link", "set", host_link_, "up"});
  // Replaces a route a dead agent left to the address (its attempt's rank on another node then).
  run({"route", "replace", address + "/32", "dev", host_link_, "scope", "link"});
  for (const auto& [peer, node_host] : remote) {
    run({"route", "replace", peer + "/32", "via", node_host});
    undo_.push_back({"route", "del", peer + "/32", "via", node_host});
  }

  // Shared by every attempt on the host, and kept: added once, by whichever comes first.
  const std::vector<std::string> prohibit{"rule", "add", "pref", std::to_string(kJobNetworkProhibitPriority), "to",
                                          plan.pool.text(), "prohibit"};
  if (const IpResult result = run_ip(host_.ip_program, prohibit); !result.ok && result.output.find("File exists") == std::string::npos) {
    throw std::runtime_error(command_text(prohibit) + ": " + result.output);
  }
  const std::string priority = std::to_string(host_.allow_priority);
  std::vector<std::pair<std::string, std::string>> allowed{{address, plan.block.text()}};
  if (plan.block.prefix < 32) allowed.emplace_back(plan.block.text(), address);  // a one-rank block's is the same rule
  for (const auto& [from, to] : allowed) {
    run({"rule", "add", "pref", priority, "from", from, "to", to, "lookup", "main"});
    undo_.push_back({"rule", "del", "pref", priority, "from", from, "to", to, "lookup", "main"});
  }
}

void JobNetwork::tear_down() {
  for (auto step = undo_.rbegin(); step != undo_.rend(); ++step) {
    if (const IpResult result = run_ip(host_.ip_program, *step); !result.ok) {
      spdlog::warn("event=job_network_not_removed command=\"{}\" error=\"{}\"", command_text(*step), result.output);
    }
  }
  undo_.clear();
  if (netns_fd_ >= 0) ::close(netns_fd_);
  netns_fd_ = -1;
}

}  // namespace trainyard::agent
