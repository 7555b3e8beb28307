#pragma once
// Nodes as the daemon records them (docs/DESIGN.md "Node states").
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/json_reader.h"
#include "proto/time.h"

namespace trainyard::inline proto {

enum class NodeState { healthy, suspect, unhealthy, drained, down };

// Free space on one of a node's filesystems, as its agent measured it (statvfs): "work" holds the
// attempts' directories and logs, "checkpoint" the checkpoint root.
struct DiskSpace {
  std::string role;  // "work" or "checkpoint"
  std::int64_t free_mb = 0;
  std::int64_t total_mb = 0;
  bool operator==(const DiskSpace&) const = default;
};
Json to_json(const DiskSpace& d);
// Strict: throws InvalidInput naming the field under `path`.
DiskSpace parse_disk_space(const Json& j, const std::string& path);

struct Node {
  std::string name;
  int cores = 0;
  std::int64_t memory_mb = 0;
  std::map<std::string, std::string> labels;
  std::string agent_version;
  std::string data_addr;  // host:port of the agent's data plane (collectives)
  NodeState state = NodeState::healthy;
  std::string state_reason;
  TimePoint state_since{};
  std::optional<TimePoint> last_heartbeat;
  bool connected = false;
  std::vector<std::string> faults;  // injected faults the agent reports, as "--fault" specs
  // The node's latest finished health check: its id, this node's verdict in it, and when.
  std::int64_t last_check_id = 0;
  std::string last_check_verdict;
  std::optional<TimePoint> last_check_at;
  std::vector<DiskSpace> disks;  // from the latest heartbeat
  std::string cgroups;  // how its agent contains attempts: "v1", "v2" or "unavailable: <why>"
  // Whether its agent gives attempts a network of their own: "netns" or "unavailable: <why>".
  std::string job_network;
};

std::string to_string(NodeState s);  // "HEALTHY", ...
std::optional<NodeState> parse_node_state(std::string_view s);
// Only HEALTHY nodes take new work.
inline bool accepts_work(NodeState s) { return s == NodeState::healthy; }

Json to_json(const Node& n);
Node node_from_json(const Json& j);

}  // namespace trainyard::proto
