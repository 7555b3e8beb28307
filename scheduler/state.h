#pragma once
// The scheduler's bookkeeping, shared by its event handlers (scheduler.cpp), the pass (pass.cpp)
// and the explanations (reasons.cpp). Internal: only scheduler/ includes it.
#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "scheduler/capacity.h"
#include "scheduler/types.h"

namespace trainyard::scheduler::detail {

// Order within a share: higher priority, then earlier submission, then lower id.
struct JobKey {
  int neg_priority = 0;
  std::int64_t submitted_ms = 0;
  JobId id = 0;
  auto operator<=>(const JobKey&) const = default;
};

// An ordered set that also answers "how many come before this one" in O(log n), for queue positions.
using JobQueue = __gnu_pbds::tree<JobKey, __gnu_pbds::null_type, std::less<JobKey>, __gnu_pbds::rb_tree_tag,
                                  __gnu_pbds::tree_order_statistics_node_update>;

struct QueuedJob {
  JobId id = 0;
  int share = 0;
  JobKey key;
  Shape shape;
  std::optional<std::int64_t> timeout_s;
  std::vector<JobId> waiting_for;
  std::optional<TimePoint> not_before;
  std::vector<int> excluded;  // node indices, sorted: avoided while other nodes fit (placement.h)
  bool ready = false;         // in its share's queue, rather than held by a dependency or backoff
  std::string dependency_reason;
  std::optional<JobId> array;  // a task of this array, which has a %K limit
  bool gated = false;          // held by its array's limit
};

// An array with a %K limit: the tasks let through (ready or running) and those waiting their turn.
struct ArrayGate {
  int limit = 1;
  std::set<JobId> admitted;
  std::set<std::pair<JobKey, JobId>> waiting;
};

struct RunningWork {
  int share = 0;
  std::vector<std::pair<int, int>> nodes;  // node index, cores
  std::int64_t memory_mb = 0;              // on each of them
  int cores = 0;
  TimePoint charged_until{};  // the expected usage charged at start covers up to here
  TimePoint expected_end{};   // for reservations: start + timeout_s, or + the default horizon
};

struct ShareState {
  std::string name;
  ShareSettings settings;
  double usage = 0;  // decayed core-seconds as of usage_at
  TimePoint usage_at{};
  int running_cores = 0;
  // Over its running work in State::charging: the cores, and the cores x ms from
  // State::charges_from to each one's charged_until.
  std::int64_t charging_cores = 0;
  std::int64_t charging_core_ms = 0;
  JobQueue ready;
  int held = 0;             // pending jobs waiting for a dependency or backoff
  double order_ratio = 0;   // (usage + expected) / weight after the last pass
  double factor = 1;        // after the last pass
  // Deleted while it had no work: left out of the table and of persisted usage. Its slot stays
  // (indexes name it) and comes back, fresh, when a job or an admin names the share again.
  bool forgotten = false;
};

struct NodeSlot {
  std::string name;
  int cores = 0;
  int used = 0;          // held by running work
  std::int64_t memory_mb = 0;
  std::int64_t used_memory_mb = 0;  // held by running work
  bool present = false;  // known to the daemon now; slots of removed nodes stay, as running work may name them
  bool accepts = false;
};

// Why a job examined in the last pass did not start, kept as facts and worded only when asked.
struct ReasonFacts {
  ReasonCode code = ReasonCode::resources;
  int nodes_fit = 0;
  JobId other = 0;
  TimePoint until{};
};

// The blocked top job's reservation, with the cores other jobs may take without delaying it.
struct ActiveReservation {
  Reservation public_view;
  std::vector<int> spare_at;  // per node: cores free at `at` that the reserved job does not need
  std::vector<std::int64_t> spare_memory_at;  // and MiB
  Capacity beyond;            // per node: min(free now, spare_at): room for work running past `at`
};

struct LastPass {
  TimePoint at{};
  Capacity capacity;  // free cores after the pass's starts
  std::optional<ActiveReservation> reservation;
  std::unordered_map<JobId, ReasonFacts> reasons;
  std::int64_t reserved_cores = 0;  // compute reservation
};

struct State {
  Config config;

  std::vector<NodeSlot> nodes;
  std::unordered_map<std::string, int> node_index;
  std::map<std::string, int> groups;  // placement label value -> group id
  // Per node slot, kept up to date by every change to a node or to the work holding its cores, so a
  // pass starts from them rather than rebuilding them from every node: the free
  // cores now, and the placement group (-1 without the placement label).
  Capacity capacity;
  std::vector<int> group_of;

  std::vector<ShareState> shares;
  std::unordered_map<std::string, int> share_index;

  std::unordered_map<JobId, QueuedJob> queued;
  std::set<std::pair<TimePoint, JobId>> backoff;  // held jobs with a not_before, by release time
  std::map<int, int> ready_demand;  // cores_per_node (0: whole node) -> ready jobs, to stop a pass early

  std::unordered_map<JobId, ArrayGate> arrays;
  std::unordered_map<JobId, JobId> array_of;  // task -> its gated array

  std::unordered_map<JobId, RunningWork> running;
  std::set<std::pair<TimePoint, JobId>> running_by_end;
  // Running work whose advance charge had not run out at `charges_from`, by charged_until. With the
  // shares' sums over it, the expected usage costs the charges that ran out since the last pass
  // rather than a step for every running job.
  std::set<std::pair<TimePoint, JobId>> charging;
  TimePoint charges_from{};

  LastPass last;

  int node_slot(const std::string& name);    // creates an absent slot for a name not seen yet
  void upsert_node(const NodeInfo& info);
  void remove_node(const std::string& name);
  void refresh_capacity(int node);           // after the slot's cores, presence or use changed
  int share_slot(const std::string& name);   // creates the share with weight 1
  bool is_system(int share) const { return shares[share].name == config.system_share; }

  void settle(int share, TimePoint now);     // brings the share's decayed usage up to now
  std::vector<double> expected_usage(TimePoint now) const;  // per share: charged in advance, not yet used
  void expire_charges(TimePoint now);                       // moves charges_from up to now (a pass's time)
  Millis horizon(std::optional<std::int64_t> timeout_s) const;
  TimePoint expected_end(TimePoint start, std::optional<std::int64_t> timeout_s) const;

  void make_ready(QueuedJob& job);
  // Array limits (array_gate.cpp): make_ready unless the job's array is at its limit, then it waits.
  void admit(QueuedJob& job);
  void join_array(JobId task, const ArrayLimit& array);
  // The task no longer holds a place (ended, removed): the next waiting task of its array gets it.
  void leave_array(JobId task);
  void unqueue(JobId id);
  void hold_running(JobId id, int share, std::vector<std::pair<int, int>> nodes, std::int64_t memory_mb,
                    TimePoint start, std::optional<std::int64_t> timeout_s);
  void release_running(JobId id, TimePoint now);
};

// One scheduling pass; pass.cpp.
PassResult run_pass(State& state, TimePoint now);
// A job's reason as of the last pass; reasons.cpp.
// Why a job that does not fit now waits: free cores (resources), or nodes in service that could hold
// it even idle (nodes_unavailable), with how many of them there are.
ReasonFacts shortfall(const Capacity& capacity, const Shape& shape, int fit);
PendingReason explain(const State& state, const QueuedJob& job);

}  // namespace trainyard::scheduler::detail
