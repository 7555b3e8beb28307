#include "daemon/nodes/node_registry.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "daemon/events/events.h"

namespace trainyard::daemon {

NodeRegistry::NodeRegistry(const TimeSource& clock, scheduler::Scheduler& scheduler, UnderTest under_test)
    : clock_(clock), scheduler_(scheduler), under_test_(std::move(under_test)) {}

void NodeRegistry::restore(const std::vector<Node>& nodes) {
  const TimePoint now = clock_.system_now();
  const MonoTime mono_now = clock_.monotonic_now();
  for (const auto& node : nodes) {
    auto existing = nodes_.find(node.name);
    recount_cores(existing == nodes_.end() ? 0 : existing->second.node.cores, node.cores);
    NodeEntry& entry = nodes_[node.name] = NodeEntry{node, nullptr, {}, 0, mono_now};
    entry.node.connected = false;
    entry.node.last_heartbeat = now;
    sync(entry);
  }
}

void NodeRegistry::recount_cores(int before, int after) {
  if (before == after) return;
  if (before > 0 && --nodes_by_cores_[before] == 0) nodes_by_cores_.erase(before);
  if (after > 0) ++nodes_by_cores_[after];
}

NodeRegistry::Registration NodeRegistry::register_agent(const HelloMsg& hello, std::shared_ptr<AgentChannel> channel,
                                                        bool needs_check) {
  const TimePoint now = clock_.system_now();
  NodeEntry& entry = nodes_[hello.name];
  if (entry.channel && entry.channel != channel) entry.channel->disconnect("replaced by a new connection of the same node");
  const bool is_new = entry.node.name.empty();
  entry.channel = std::move(channel);
  entry.disconnected_at.reset();
  entry.jobs_hit.clear();
  entry.node.name = hello.name;
  recount_cores(is_new ? 0 : entry.node.cores, hello.cores);
  entry.node.cores = hello.cores;
  entry.node.memory_mb = hello.memory_mb;
  entry.node.labels = hello.labels;
  entry.node.agent_version = hello.agent_version;
  entry.node.data_addr = hello.data_addr;
  entry.node.faults = hello.faults;
  entry.node.cgroups = hello.cgroups;
  entry.node.job_network = hello.job_network;
  entry.node.connected = true;
  entry.node.last_heartbeat = now;
  entry.heard_at = clock_.monotonic_now();
  Registration registration;
  registration.gated = needs_check && entry.node.state != NodeState::drained;
  if (registration.gated) {
    change_state(entry, NodeEvent::registered_unproven, "registered; awaiting its registration health check", now,
                 registration.change);
  } else if (is_new || entry.node.state == NodeState::down) {
    change_state(entry, NodeEvent::registered, is_new ? "registered" : "reconnected", now, registration.change);
  } else {
    sync(entry);
    registration.change.nodes.push_back(entry.node);
  }
  registration.change.events.push_back(
      node_event(now, "node.registered", hello.name,
                 "node " + hello.name + " registered: agent " + hello.agent_version + " with " +
                     std::to_string(hello.cores) + " cores",
                 {{"agent_version", hello.agent_version}, {"cores", hello.cores}}));
  return registration;
}

std::vector<std::int64_t> NodeRegistry::memory_by_node() const {
  std::vector<std::int64_t> memory;
  memory.reserve(nodes_.size());
  for (const auto& [name, entry] : nodes_) memory.push_back(entry.node.memory_mb);
  return memory;
}

bool NodeRegistry::heard_from(const std::string& name, const AgentChannel* channel) {
  auto it = nodes_.find(name);
  if (it == nodes_.end() || it->second.channel.get() != channel) return false;
  it->second.node.last_heartbeat = clock_.system_now();
  it->second.heard_at = clock_.monotonic_now();
  return true;
}

bool NodeRegistry::disconnected(const std::string& name, const AgentChannel* channel) {
  auto it = nodes_.find(name);
  if (it == nodes_.end() || it->second.channel.get() != channel) return false;
  it->second.channel.reset();
  it->second.node.connected = false;
  it->second.disconnected_at = clock_.monotonic_now();
  sync(it->second);
  return true;
}

std::vector<std::pair<std::string, Millis>> NodeRegistry::silent_nodes(MonoTime now, Millis timeout) const {
  std::vector<std::pair<std::string, Millis>> silent;
  for (const auto& [name, entry] : nodes_) {
    if (entry.node.state == NodeState::down || !entry.node.last_heartbeat) continue;
    const auto quiet = std::chrono::duration_cast<Millis>(now - entry.heard_at);
    if (quiet > timeout) silent.emplace_back(name, quiet);
  }
  return silent;
}

void NodeRegistry::excuse_silence(MonoTime now, Millis paused) {
  for (auto& [name, entry] : nodes_) entry.heard_at = std::min(entry.heard_at + paused, now);
}

store::Change NodeRegistry::mark_down(const std::string& name, const std::string& reason) {
  NodeEntry& entry = nodes_.at(name);
  const TimePoint now = clock_.system_now();
  entry.node.connected = false;
  if (entry.channel) {
    entry.channel->disconnect(reason);
    entry.channel.reset();
  }
  store::Change change;
  change_state(entry, NodeEvent::lost, reason, now, change);
  return change;
}

void NodeRegistry::note_job_hit(const std::string& name, JobId job) {
  if (auto it = nodes_.find(name); it != nodes_.end()) it->second.jobs_hit.insert(job);
}

store::Change NodeRegistry::drain(const std::string& name, const std::string& reason) {
  NodeEntry& entry = nodes_.at(name);
  const TimePoint now = clock_.system_now();
  store::Change change;
  change_state(entry, NodeEvent::drained, reason, now, change);
  return change;
}

std::pair<store::Change, std::optional<std::int64_t>> NodeRegistry::undrain(const std::string& name, const std::string& by,
                                                                     const std::function<std::int64_t()>& start_check) {
  NodeEntry& entry = nodes_.at(name);
  const TimePoint now = clock_.system_now();
  const bool drained = entry.node.state == NodeState::drained;
  store::Change change;
  if (drained) {
    change_state(entry, NodeEvent::undrained, "undrained by " + by, now, change);
  } else {
    change_state(entry, NodeEvent::undrained_unproven,
                 "undrained by " + by + "; returns to service after passing its health check", now, change);
  }
  // An UNHEALTHY or DOWN node returns after the check that starts once it is SUSPECT; the event names it.
  const std::optional<std::int64_t> check = drained ? std::nullopt : std::optional(start_check());
  change.events.back().details["health_check_id"] = check ? Json(*check) : Json(nullptr);
  return {std::move(change), check};
}

void NodeRegistry::put_back_state(const Node& before) {
  auto it = nodes_.find(before.name);
  if (it == nodes_.end()) return;
  // Memory put back as the store still holds it (a failed commit): an undo, not a lifecycle step.
  it->second.node.state = before.state;
  it->second.node.state_reason = before.state_reason;
  it->second.node.state_since = before.state_since;
  sync(it->second);
}

void NodeRegistry::mark_suspect(const std::string& name, const std::string& reason, const Json& details, store::Change& change) {
  NodeEntry& entry = nodes_.at(name);
  change_state(entry, NodeEvent::suspected, reason, clock_.system_now(), change, details);
}

void NodeRegistry::record_check(const std::string& name, const HealthCheckResult& result, store::Change& change) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  const TimePoint now = clock_.system_now();
  Node& node = it->second.node;
  const Json record = node_health_record(result, name);
  const std::string verdict = record["verdict"];
  change.node_health.push_back(store::NodeHealthRow{name, result.id, now, verdict, record});
  node.last_check_id = result.id;
  node.last_check_verdict = verdict;
  node.last_check_at = now;
  const auto judged = parse_node_state(verdict);
  const auto event = judged ? check_event(*judged) : std::nullopt;
  const auto moved = event ? node_transition(node.state, *event) : std::nullopt;
  const bool judged_state = node.state == NodeState::healthy || node.state == NodeState::suspect ||
                            node.state == NodeState::unhealthy;  // a drained or down node's check moves nothing
  if (moved && judged_state) {
    const std::string reason = moved->next == NodeState::healthy
                                   ? "passed health check " + std::to_string(result.id) + " (" + to_string(result.request.kind) + ")"
                                   : record["reason"].get<std::string>();
    if (moved->next != node.state) {
      change_state(it->second, *event, reason, now, change);
      spdlog::info("event=node_state node={} state={} check={} reason=\"{}\"", name, to_string(moved->next), result.id, reason);
      return;
    }
    node.state_reason = reason;  // found as it was: the reason says by which check, with no event and the same since
  }
  change.nodes.push_back(node);
  sync(it->second);
}

store::Change NodeRegistry::set_faults(const std::string& name, std::vector<std::string> faults) {
  NodeEntry& entry = nodes_.at(name);
  entry.node.faults = std::move(faults);
  store::Change change;
  change.nodes.push_back(entry.node);
  return change;
}

namespace {
constexpr std::string_view kLowDiskPrefix = "low disk space";
}  // namespace

void NodeRegistry::record_disks(const std::string& name, std::vector<DiskSpace> disks, const healthcheck::DiskPolicy& policy,
                                store::Change& change) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  NodeEntry& entry = it->second;
  entry.node.disks = std::move(disks);
  const auto low = healthcheck::low_disk_reason(entry.node.disks, policy);
  const bool was_low = entry.low_disk;
  entry.low_disk = low.has_value();
  const TimePoint now = clock_.system_now();
  if (low && entry.node.state == NodeState::healthy) {
    change_state(entry, NodeEvent::suspected, *low, now, change);
    spdlog::warn("event=node_state node={} state=SUSPECT reason=\"{}\"", name, *low);
  } else if (!low && entry.node.state == NodeState::suspect && entry.node.state_reason.starts_with(kLowDiskPrefix)) {
    const std::string reason = "disk space recovered";
    change_state(entry, NodeEvent::disk_recovered, reason, now, change);
    spdlog::info("event=node_state node={} state=HEALTHY reason=\"{}\"", name, reason);
  }
  if (was_low != entry.low_disk) sync(entry);
}

void NodeRegistry::hold(AttemptId attempt, const std::vector<std::string>& nodes, int cores) {
  for (const auto& name : nodes) {
    auto it = nodes_.find(name);
    if (it == nodes_.end()) continue;
    it->second.attempts.insert(attempt);
    it->second.used_cores += cores;
  }
}

void NodeRegistry::release(AttemptId attempt, const std::vector<std::string>& nodes, int cores) {
  for (const auto& name : nodes) {
    auto it = nodes_.find(name);
    if (it == nodes_.end()) continue;
    it->second.attempts.erase(attempt);
    it->second.used_cores -= cores;
  }
}

void NodeRegistry::keep_unheard(AttemptId attempt, const std::string& node) {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return;
  it->second.attempts.erase(attempt);
  it->second.unheard.insert(attempt);
  sync(it->second);
}

void NodeRegistry::release_unheard(AttemptId attempt, const std::string& node, int cores) {
  auto it = nodes_.find(node);
  if (it == nodes_.end() || it->second.unheard.erase(attempt) == 0) return;
  it->second.used_cores -= cores;
  sync(it->second);
}

bool NodeRegistry::send(const std::string& name, const DaemonMessage& message) {
  auto it = nodes_.find(name);
  if (it == nodes_.end() || !it->second.channel) return false;
  it->second.channel->send(message);
  return true;
}

bool NodeRegistry::connected(const std::string& name) const {
  const NodeEntry* entry = find(name);
  return entry && entry->channel;
}

std::optional<std::string> NodeRegistry::data_addr(const std::string& name) const {
  const NodeEntry* entry = find(name);
  if (!entry || !entry->channel || entry->node.data_addr.empty()) return std::nullopt;
  return entry->node.data_addr;
}

void NodeRegistry::sync(const std::string& name) {
  if (auto it = nodes_.find(name); it != nodes_.end()) sync(it->second);
}

void NodeRegistry::set_spares(const std::vector<std::string>& names) {
  for (auto& [name, entry] : nodes_) {
    const bool spare = std::find(names.begin(), names.end(), name) != names.end();
    if (entry.spare == spare) continue;
    entry.spare = spare;
    sync(entry);
  }
}

bool NodeRegistry::takes_work(const NodeEntry& entry) const {
  return scheduler::node_info(entry.node).accepts_work && !entry.low_disk && !entry.spare && entry.unheard.empty() &&
         !under_test_(entry.node.name);
}

void NodeRegistry::sync(const NodeEntry& entry) {
  scheduler::NodeInfo info = scheduler::node_info(entry.node);
  info.accepts_work = takes_work(entry);
  scheduler_.upsert_node(info);
}

Transition<NodeState> NodeRegistry::change_state(NodeEntry& entry, NodeEvent event, std::string reason, TimePoint at,
                                                 store::Change& change, const Json& details) {
  const Transition<NodeState> taken = trainyard::daemon::change_state(entry.node.state, event);
  entry.node.state_reason = std::move(reason);
  entry.node.state_since = at;
  sync(entry);
  change.nodes.push_back(entry.node);
  if (!taken.event_type.empty()) {
    store::Event entered = node_state_event(at, taken.event_type, taken.next, entry.node.name, entry.node.state_reason);
    entered.details.update(details);
    change.events.push_back(std::move(entered));
  }
  return taken;
}

const NodeEntry* NodeRegistry::find(const std::string& name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

std::vector<NodeView> NodeRegistry::views() const {
  std::vector<NodeView> out;
  out.reserve(nodes_.size());
  for (const auto& [name, entry] : nodes_) out.push_back(view_of(entry));
  return out;
}

bool NodeFilter::matches(const Node& node) const {
  if (!states.empty() && std::find(states.begin(), states.end(), node.state) == states.end()) return false;
  if (label) {
    const auto it = node.labels.find(label->first);
    if (it == node.labels.end() || it->second != label->second) return false;
  }
  return node.name.starts_with(name_prefix);
}

NodePage NodeRegistry::page(const NodeFilter& filter, const std::string& after, std::size_t limit) const {
  NodePage page;
  auto it = nodes_.lower_bound(filter.name_prefix);
  if (!after.empty() && it != nodes_.end() && it->first <= after) it = nodes_.upper_bound(after);
  for (; it != nodes_.end() && it->first.starts_with(filter.name_prefix); ++it) {
    if (!filter.matches(it->second.node)) continue;
    if (page.nodes.size() == limit) {
      page.more = true;
      break;
    }
    page.nodes.push_back(view_of(it->second));
  }
  return page;
}

std::optional<NodeView> NodeRegistry::view(const std::string& name) const {
  const NodeEntry* entry = find(name);
  if (!entry) return std::nullopt;
  return view_of(*entry);
}

NodeView NodeRegistry::view_of(const NodeEntry& entry) {
  return NodeView{entry.node, entry.free_cores(), {entry.attempts.begin(), entry.attempts.end()}, entry.heard_at};
}

}  // namespace trainyard::daemon
