#pragma once
// Nodes as the daemon records them (DESIGN.md "Health": node states).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/json_reader.h"
#include "proto/time.h"

namespace trainyard {

enum class NodeState { healthy, suspect, unhealthy, drained, down };

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
};

std::string to_string(NodeState s);  // "HEALTHY", ...
std::optional<NodeState> parse_node_state(std::string_view s);
// Only HEALTHY nodes take new work.
inline bool accepts_work(NodeState s) { return s == NodeState::healthy; }

Json to_json(const Node& n);
Node node_from_json(const Json& j);

}  // namespace trainyard
