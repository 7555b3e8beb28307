#pragma once
// Hosts for integration tests and soaks, built out of Linux network namespaces: each host is a
// namespace with its own loopback and one veth link into a switch namespace that bridges them, and
// its own address on 10.77.0.0/24. A daemon, an agent or the test itself (as the operator's
// machine) lives on a host, so ranks reach each other at their nodes' addresses and nothing shares
// loopback. Everything runs on this machine: no host has a route anywhere else.
//
// The nemesis side of the harness can, with `ip` alone (these machines have no tc netem and no
// iptables): cut a host's link (both directions drop, connections stay open, as when a switch
// port or cable fails), drop one direction between two hosts (the sender routes it to a neighbour
// that never answers), and
// heal either. It cannot delay, reorder, duplicate or corrupt packets, or drop a fraction of them.
// Freezing and killing processes is the test's own (SIGSTOP, SIGCONT, SIGKILL of their pids).
//
// Every namespace is deleted when the HostNetwork goes away; namespaces left by a process that was
// killed first (their names carry its pid) are swept when the next HostNetwork is made.
#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trainyard::testing {

class HostNetwork {
 public:
  // Why hosts cannot be built here (not root, no `ip netns`), or nullopt when they can.
  static std::optional<std::string> unavailable();

  HostNetwork();
  ~HostNetwork();
  HostNetwork(const HostNetwork&) = delete;
  HostNetwork& operator=(const HostNetwork&) = delete;

  // Adds a host named `name` (letters, digits and '-'); returns its address.
  std::string add_host(const std::string& name);
  const std::string& address(const std::string& host) const;
  // The namespace's file, for setns(2) in a child before it execs.
  std::string netns_path(const std::string& host) const;
  // What `ip ARGS` prints on the host (its rules, routes, links); throws when it fails.
  std::string ip_on(const std::string& host, const std::vector<std::string>& args) const;
  // Moves the calling thread into the host's namespace, until the HostNetwork goes away.
  void enter(const std::string& host);

  void cut(const std::string& host);   // its link down at the switch
  void heal(const std::string& host);  // up again
  // Packets from `from` to `to` are dropped; those from `to` still arrive.
  void drop(const std::string& from, const std::string& to);
  void undrop(const std::string& from, const std::string& to);

 private:
  struct Host {
    std::string netns;
    std::string address;
    std::string port;  // its link's end in the switch namespace
  };
  const Host& host(const std::string& name) const;

  std::string prefix_;  // trainyard-<pid>-<n>-: names this network's namespaces
  std::string switch_;
  std::map<std::string, Host> hosts_;
  int original_netns_ = -1;  // of the thread that entered a host
};

// Runs `ip` with `args`; throws std::runtime_error with its output when it fails.
void run_ip(const std::vector<std::string>& args);

// Whether process `pid` exists, also when this process may not signal it.
bool process_alive(pid_t pid);

}  // namespace trainyard::testing
