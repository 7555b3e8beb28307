#pragma once
// The nodes the daemon knows (docs/DESIGN.md "Node registry and monitors"): what each agent registered
// with, its connection, when it was last heard from, the attempts it holds and their cores, and its state.
//
// Every state transition of a node happens here and is returned as the Change that records it (the
// node and its event); the caller persists it, and acts once it is stored. The scheduler's view of
// each node (scheduler::NodeInfo) follows every change made here: a node takes new work only while
// HEALTHY, connected and not under a health check.
//
// Threading contract: I/O thread only.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/base/store_worker.h"
#include "daemon/nodes/health_checks.h"
#include "daemon/policy/job_fit.h"
#include "daemon/policy/lifecycle.h"
#include "healthcheck/disk_space.h"
#include "proto/messages.h"
#include "proto/time.h"
#include "scheduler/scheduler.h"

namespace trainyard::daemon {

// The daemon's handle on one connected agent (the gateway implements it).
class AgentChannel {
 public:
  virtual ~AgentChannel() = default;
  virtual void send(const DaemonMessage& message) = 0;
  virtual void disconnect(const std::string& reason) = 0;
};

// One node as the API and the dashboard read it.
struct NodeView {
  Node node;
  int free_cores = 0;
  std::vector<AttemptId> attempts;
  MonoTime heard_at{};  // node.last_heartbeat on the monotonic clock
};

// Which nodes a list shows: any of `states` (all when empty), carrying label `label` (key, value)
// when given, whose name starts with `name_prefix`.
struct NodeFilter {
  std::vector<NodeState> states;
  std::optional<std::pair<std::string, std::string>> label;
  std::string name_prefix;

  bool matches(const Node& node) const;
};

// Up to a page of the nodes a filter matches, in name order, and whether more follow.
struct NodePage {
  std::vector<NodeView> nodes;
  bool more = false;
};

struct NodeEntry {
  Node node;
  std::shared_ptr<AgentChannel> channel;
  std::set<AttemptId> attempts;
  int used_cores = 0;
  MonoTime heard_at{};  // node.last_heartbeat on the monotonic clock, for the node timeout
  bool low_disk = false;  // its latest heartbeat found a filesystem short of space: it takes no work
  std::optional<MonoTime> disconnected_at;  // when its agent's connection closed, while it stays closed
  bool spare = false;  // held idle for resumes (recovery.h): the scheduler gives it no new work
  // Attempts that ended without this node being heard to stop its rank (unheard_stops.h): it keeps
  // their cores and takes no work until it is heard without them, or goes DOWN.
  std::set<AttemptId> unheard;
  // Jobs whose rank here was lost since the node last registered: its node.down names them, also
  // when their attempts ended before the node timeout made it DOWN.
  std::set<JobId> jobs_hit;

  int free_cores() const { return node.cores - used_cores; }
};

class NodeRegistry {
 public:
  // Whether a health check runs on the node (its suites use the node's cores and links).
  using UnderTest = std::function<bool(const std::string& node)>;
  NodeRegistry(const TimeSource& clock, scheduler::Scheduler& scheduler, UnderTest under_test);

  // The stored nodes, disconnected, each given one node timeout from now to reconnect.
  void restore(const std::vector<Node>& nodes);

  struct Registration {
    bool gated = false;  // SUSPECT until it passes its registration check
    store::Change change;       // the node as registered and its node.registered event
  };
  // An agent's hello: takes its connection (disconnecting one it replaces) and what it registered
  // with. `needs_check`: it runs none of our attempts, so (unless DRAINED) it is tested before it
  // takes work; otherwise a new or DOWN node is HEALTHY again and any other keeps its state.
  Registration register_agent(const HelloMsg& hello, std::shared_ptr<AgentChannel> channel, bool needs_check);
  // A message arrived on `channel`: false when that connection was replaced (ignore the message).
  bool heard_from(const std::string& name, const AgentChannel* channel);
  // The connection closed (noted as disconnected_at). False when it was already replaced.
  bool disconnected(const std::string& name, const AgentChannel* channel);

  // Nodes not DOWN that sent nothing for longer than `timeout`, with how long each was silent.
  std::vector<std::pair<std::string, Millis>> silent_nodes(MonoTime now, Millis timeout) const;
  // The daemon itself did not run for `paused` before `now`: that is not counted as the nodes' silence.
  void excuse_silence(MonoTime now, Millis paused);
  // DOWN: disconnected, takes no work. Its attempts stay listed for the caller to wind up.
  store::Change mark_down(const std::string& name, const std::string& reason);
  // DRAINED takes no new work.
  store::Change drain(const std::string& name, const std::string& reason);
  // A DRAINED node returns to service at once; any other is SUSPECT until it passes the health
  // check `start_check` starts (its id is returned and named in the event).
  std::pair<store::Change, std::optional<std::int64_t>> undrain(const std::string& name, const std::string& by,
                                                         const std::function<std::int64_t()>& start_check);
  // SUSPECT until it passes a health check, with `details` on its state event.
  void mark_suspect(const std::string& name, const std::string& reason, const Json& details, store::Change& change);
  // A finished health check's verdict on the node: its health row, last check, and the state the
  // verdict leads to.
  void record_check(const std::string& name, const HealthCheckResult& result, store::Change& change);
  // Puts back the state a request changed (drain, undrain) when its change could not be stored.
  void put_back_state(const Node& before);
  store::Change set_faults(const std::string& name, std::vector<std::string> faults);
  // The free space its heartbeat reported. Short of space (healthcheck/disk_space.h), a HEALTHY node
  // turns SUSPECT and takes no work, whatever a health check says meanwhile; once space returns, a
  // node SUSPECT for that alone is HEALTHY again. State changes go into `change`.
  void record_disks(const std::string& name, std::vector<DiskSpace> disks, const healthcheck::DiskPolicy& policy,
                    store::Change& change);

  // A rank of `job` on the node was lost (noted in NodeEntry::jobs_hit).
  void note_job_hit(const std::string& name, JobId job);
  // The attempt holds `cores` on each of `nodes` until it is released.
  void hold(AttemptId attempt, const std::vector<std::string>& nodes, int cores);
  void release(AttemptId attempt, const std::vector<std::string>& nodes, int cores);
  // The attempt ended without the node being heard to stop its rank: the node keeps its cores.
  void keep_unheard(AttemptId attempt, const std::string& node);
  // It was heard (or is DOWN): the cores it kept for the attempt are free.
  void release_unheard(AttemptId attempt, const std::string& node, int cores);

  // Sends to the node's agent; false when it is not connected.
  bool send(const std::string& name, const DaemonMessage& message);
  bool connected(const std::string& name) const;
  bool under_test(const std::string& name) const { return under_test_(name); }
  // Whether the scheduler may give the node new work: connected, in a state that accepts work, not
  // short of disk, not a spare, not under a health check. What the scheduler's view is synced from.
  bool takes_work(const NodeEntry& entry) const;
  // Where a connected node's data plane listens (health checks' collectives).
  std::optional<std::string> data_addr(const std::string& name) const;
  // Exactly these nodes are spares from now on (the scheduler gives them no new work).
  void set_spares(const std::vector<std::string>& names);
  // Brings the scheduler's view of the node up to date (after a check starts or ends on it).
  void sync(const std::string& name);

  const NodeEntry* find(const std::string& name) const;
  bool contains(const std::string& name) const { return nodes_.contains(name); }
  const std::map<std::string, NodeEntry>& entries() const { return nodes_; }
  std::size_t size() const { return nodes_.size(); }
  const NodeCoreCounts& nodes_by_cores() const { return nodes_by_cores_; }
  // The memory each registered node reports (0: unknown), for a job that asks for some.
  std::vector<std::int64_t> memory_by_node() const;
  std::vector<NodeView> views() const;
  // The nodes `filter` matches named after `after` (all from the first when empty), at most `limit`:
  // a page costs its own nodes, not the fleet's (the registry is ordered by name).
  NodePage page(const NodeFilter& filter, const std::string& after, std::size_t limit) const;
  std::optional<NodeView> view(const std::string& name) const;

 private:
  void sync(const NodeEntry& entry);
  static NodeView view_of(const NodeEntry& entry);
  // Every state change, along the node lifecycle (daemon/policy/lifecycle.h), and what it stores:
  // adds to `change` the node's record and the event of the state it entered (with `details`),
  // when the lifecycle names one, and tells the scheduler. Returns the transition taken.
  Transition<NodeState> change_state(NodeEntry& entry, NodeEvent event, std::string reason, TimePoint at,
                                     store::Change& change, const Json& details = Json::object());
  // Keeps `nodes_by_cores_` counting a node whose core count goes from `before` (0: new) to `after`.
  void recount_cores(int before, int after);

  const TimeSource& clock_;
  scheduler::Scheduler& scheduler_;
  UnderTest under_test_;
  std::map<std::string, NodeEntry> nodes_;
  NodeCoreCounts nodes_by_cores_;
};

}  // namespace trainyard::daemon
