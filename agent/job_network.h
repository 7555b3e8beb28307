#pragma once
// A network of its own for each attempt whose launch asks for one (the daemon's --job-network): on a
// shared host, jobs otherwise share one network, and one job could bind another's MASTER_PORT first
// or connect to its rendezvous (PyTorch's TCPStore has no authentication) and collectives.
//
// A root agent makes a network namespace per attempt and node, joined by each of the attempt's
// processes there before they drop to the job's account (agent/process_spawn.h), with the loopback
// and one interface, eth0, holding the rank's address from the daemon's pool (a /32). A veth pair
// links it to the host, as Kubernetes' pods are linked (Calico's layout: the host's end answers ARP
// for what the host routes, so the namespace needs a route to its attempt's block and nothing else).
// The host routes the rank's address to its end of the link, and the other ranks' addresses to
// their nodes (`ip route ADDRESS via NODE`: the nodes of a cluster share a link, as the data plane
// assumes). These hosts have no iptables, so policy routing keeps attempts apart: a host rule
// prohibits every packet to the pool, and each rank adds the two rules that let its own attempt's
// block through (from its address to the block and back). So an attempt's ranks reach each other
// and nothing else; nothing else (another attempt, the host's own processes, another node) reaches
// them, and no other job can hold their ports. IPv6 is off in the namespace (its link-local address
// would reach the host's services).
//
// Everything but the shared prohibit rule goes with the attempt: its rules and routes are removed,
// and the veth pair with the namespace. The rules an agent adds carry a priority of its own
// (`JobNetworkHost::allow_priority`, from its node's name), so a restarted agent removes what a dead
// predecessor left without touching another agent's on the same host.
#include <string>
#include <vector>

#include "proto/ipv4_network.h"
#include "proto/messages.h"

namespace trainyard::agent {

// What every attempt's network on this node shares: how `ip` is run and the rules' priority.
struct JobNetworkHost {
  std::string ip_program;  // "/usr/sbin/ip"; empty: attempts cannot have a network of their own
  std::string support;     // for the hello: kJobNetworkSupported, or "unavailable: <why>"
  int allow_priority = 0;  // of this agent's rules (below kJobNetworkProhibitPriority)

  // Finds `ip` and checks that this process can make namespaces and set the host's forwarding; then
  // removes the rules a previous agent of node `node` left.
  static JobNetworkHost set_up(const std::string& node);
  bool available() const { return !ip_program.empty(); }
};
inline constexpr int kJobNetworkProhibitPriority = 19000;

class JobNetwork {
 public:
  // Rank `rank` of the attempt, whose ranks' data planes are at `peers` ("host:port", by rank).
  // Throws std::runtime_error saying what failed, having removed what it made.
  JobNetwork(const JobNetworkHost& host, const JobNetworkPlan& plan, int rank, const std::vector<std::string>& peers);
  ~JobNetwork();
  JobNetwork(const JobNetwork&) = delete;
  JobNetwork& operator=(const JobNetwork&) = delete;

  int net_namespace() const { return netns_fd_; }  // for setns(fd, CLONE_NEWNET); close-on-exec
  static constexpr const char* kInterface = "eth0";

 private:
  void build(const JobNetworkPlan& plan, int rank, const std::vector<std::string>& peers);
  void tear_down();

  const JobNetworkHost& host_;
  int netns_fd_ = -1;
  std::string host_link_;                   // the host's end of the veth pair
  std::vector<std::vector<std::string>> undo_;  // `ip` arguments that remove what was added, in order
};

// The host part of a data-plane address: "10.0.0.2" of "10.0.0.2:7000", "::1" of "[::1]:7000".
std::string host_of_address(const std::string& address);

}  // namespace trainyard::agent
