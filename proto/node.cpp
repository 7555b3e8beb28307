#include "proto/node.h"

#include <algorithm>
#include <cctype>

namespace trainyard::inline proto {

std::string to_string(NodeState s) {
  switch (s) {
    case NodeState::healthy: return "HEALTHY";
    case NodeState::suspect: return "SUSPECT";
    case NodeState::unhealthy: return "UNHEALTHY";
    case NodeState::drained: return "DRAINED";
    case NodeState::down: return "DOWN";
  }
  return "DOWN";
}

std::optional<NodeState> parse_node_state(std::string_view s) {
  std::string upper(s);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (NodeState st : {NodeState::healthy, NodeState::suspect, NodeState::unhealthy, NodeState::drained, NodeState::down}) {
    if (to_string(st) == upper) return st;
  }
  return std::nullopt;
}

Json to_json(const Node& n) {
  Json j = {{"name", n.name},
            {"cores", n.cores},
            {"memory_mb", n.memory_mb},
            {"labels", n.labels},
            {"agent_version", n.agent_version},
            {"data_addr", n.data_addr},
            {"state", to_string(n.state)},
            {"state_reason", n.state_reason},
            {"state_since", format_time(n.state_since)},
            {"connected", n.connected},
            {"faults", n.faults}};
  if (n.last_heartbeat) j["last_heartbeat"] = format_time(*n.last_heartbeat);
  if (!n.cgroups.empty()) j["cgroups"] = n.cgroups;
  if (!n.job_network.empty()) j["job_network"] = n.job_network;
  if (!n.disks.empty()) {
    j["disks"] = Json::array();
    for (const auto& d : n.disks) j["disks"].push_back(to_json(d));
  }
  if (n.last_check_at) {
    j["last_check"] = {{"id", n.last_check_id}, {"verdict", n.last_check_verdict}, {"at", format_time(*n.last_check_at)}};
  }
  return j;
}

Json to_json(const DiskSpace& d) { return {{"role", d.role}, {"free_mb", d.free_mb}, {"total_mb", d.total_mb}}; }

DiskSpace parse_disk_space(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  DiskSpace d;
  d.role = r.string("role", 1, 16);
  if (d.role != "work" && d.role != "checkpoint") throw InvalidInput(r.field_path("role"), "must be \"work\" or \"checkpoint\"");
  d.total_mb = r.integer("total_mb", 0, INT64_MAX);
  d.free_mb = r.integer("free_mb", 0, d.total_mb);
  r.finish();
  return d;
}

Node node_from_json(const Json& j) {
  Node n;
  n.name = j.at("name").get<std::string>();
  n.cores = j.value("cores", 0);
  n.memory_mb = j.value("memory_mb", std::int64_t{0});
  n.labels = j.value("labels", std::map<std::string, std::string>{});
  n.agent_version = j.value("agent_version", "");
  n.data_addr = j.value("data_addr", "");
  n.state = parse_node_state(j.value("state", "DOWN")).value_or(NodeState::down);
  n.state_reason = j.value("state_reason", "");
  n.state_since = parse_time(j.value("state_since", "")).value_or(TimePoint{});
  if (j.contains("last_heartbeat")) n.last_heartbeat = parse_time(j["last_heartbeat"].get<std::string>());
  n.connected = j.value("connected", false);
  n.faults = j.value("faults", std::vector<std::string>{});
  n.cgroups = j.value("cgroups", "");
  n.job_network = j.value("job_network", "");
  if (const auto disks = j.find("disks"); disks != j.end()) {
    for (std::size_t i = 0; i < disks->size(); ++i) n.disks.push_back(parse_disk_space((*disks)[i], "disks[" + std::to_string(i) + "]"));
  }
  if (j.contains("last_check")) {
    const Json& c = j["last_check"];
    n.last_check_id = c.value("id", std::int64_t{0});
    n.last_check_verdict = c.value("verdict", "");
    n.last_check_at = parse_time(c.value("at", ""));
  }
  return n;
}

}  // namespace trainyard::proto
