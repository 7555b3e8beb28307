// One scheduling pass: the policy of scheduler.h, over the state of state.h.
#include <algorithm>
#include <cassert>

#include "proto/seconds.h"
#include "scheduler/fair_share.h"
#include "scheduler/placement.h"
#include "scheduler/state.h"

namespace trainyard::scheduler::detail {
namespace {

class Pass {
 public:
  Pass(State& state, TimePoint now) : state_(state), now_(now) {}

  PassResult run() {
    release_backoffs();
    charge_shares();
    capacity_ = state_.capacity;
    reserved_cores_ = static_cast<std::int64_t>(state_.config.compute_reservation * capacity_.accepting_cores());
    // The smallest demand of any ready job: once nothing that small fits, nothing else will.
    const auto smallest = state_.ready_demand.upper_bound(0);
    const int min_cores = smallest == state_.ready_demand.end() ? 0 : smallest->first;
    const bool whole_node_demand = state_.ready_demand.contains(0);

    cursor_.resize(state_.shares.size());
    for (int share = 0; share < static_cast<int>(state_.shares.size()); ++share) {
      cursor_[share] = state_.shares[share].ready.begin();
      push(share);
    }
    while (!heap_.empty() && result_.examined < state_.config.max_jobs_examined &&
           capacity_.any_room(min_cores, whole_node_demand)) {
      std::pop_heap(heap_.begin(), heap_.end(), comes_after);
      const int share = heap_.back().share;
      heap_.pop_back();
      const QueuedJob& job = state_.queued.at((cursor_[share]++)->id);
      ++result_.examined;
      if (examine(job)) push(share);
    }
    result_.hit_limit = !heap_.empty() && result_.examined >= state_.config.max_jobs_examined &&
                        capacity_.any_room(min_cores, whole_node_demand);
    commit();
    return std::move(result_);
  }

 private:
  // Where a share stands in the merge: its usage per weight (the order of F) and its next job.
  struct Entry {
    bool system = false;
    double ratio = 0;
    JobKey head;
    int share = 0;
  };
  struct Started {
    const QueuedJob* job = nullptr;
    std::vector<std::pair<int, int>> nodes;
    TimePoint expected_end{};
  };

  // Heap order: true when `a` is taken after `b`.
  static bool comes_after(const Entry& a, const Entry& b) {
    if (a.system != b.system) return b.system;
    if (a.ratio != b.ratio) return a.ratio > b.ratio;
    if (a.head != b.head) return b.head < a.head;
    return a.share > b.share;
  }

  double ratio(int share) const { return used_[share] / state_.shares[share].settings.weight; }

  void push(int share) {
    if (cursor_[share] == state_.shares[share].ready.end()) return;
    heap_.push_back(Entry{state_.is_system(share), ratio(share), *cursor_[share], share});
    std::push_heap(heap_.begin(), heap_.end(), comes_after);
  }

  void release_backoffs() {
    while (!state_.backoff.empty() && state_.backoff.begin()->first <= now_) {
      QueuedJob& job = state_.queued.at(state_.backoff.begin()->second);
      state_.backoff.erase(state_.backoff.begin());
      job.not_before.reset();
      if (job.waiting_for.empty()) {
        --state_.shares[job.share].held;
        state_.admit(job);
      }
    }
  }

  void charge_shares() {
    state_.expire_charges(now_);
    const std::vector<double> expected = state_.expected_usage(now_);
    for (int share = 0; share < static_cast<int>(state_.shares.size()); ++share) {
      state_.settle(share, now_);
      used_.push_back(state_.shares[share].usage + expected[share]);
      running_cores_.push_back(state_.shares[share].running_cores);
    }
  }

  // Starts the job or records why not; returns whether the share's later jobs are still worth a look.
  bool examine(const QueuedJob& job) {
    const int share = job.share;
    const Shape& shape = job.shape;
    // Nodes the job avoids count: placement uses them when nothing else fits (placement.h).
    const int fit = capacity_.nodes_fitting(shape);
    if (fit < shape.nodes) {
      if (!reservation_ && !state_.is_system(share)) reserve(job);
      const bool reserved = reservation_ && reservation_->public_view.job == job.id;
      ReasonFacts facts = shortfall(capacity_, shape, fit);
      if (reserved) facts.until = reservation_->public_view.at;
      note(job.id, facts);
      return true;
    }
    const std::optional<int> cap = state_.shares[share].settings.max_running_cores;
    if (cap && !shape.whole_nodes() && running_cores_[share] + shape.nodes * shape.cores_per_node > *cap) {
      note(job.id, {ReasonCode::share_cap});
      return running_cores_[share] < *cap;
    }
    const bool past_reservation =
        reservation_ &&
        !(job.timeout_s && now_ + std::chrono::seconds(*job.timeout_s) <= reservation_->public_view.at);
    const auto nodes = place(past_reservation ? reservation_->beyond : capacity_, state_.group_of, shape, job.excluded);
    if (!nodes) {
      note(job.id, {ReasonCode::reservation, fit, reservation_->public_view.job, reservation_->public_view.at});
      return true;
    }
    int cores = 0;
    for (int node : *nodes) cores += shape.whole_nodes() ? capacity_.total(node) : shape.cores_per_node;
    if (cap && running_cores_[share] + cores > *cap) {
      note(job.id, {ReasonCode::share_cap});
      return running_cores_[share] < *cap;
    }
    if (running_cores_[share] > 0 && capacity_.free_cores() - cores < reserved_cores_) {
      note(job.id, {ReasonCode::compute_reservation});
      return false;
    }
    start(job, *nodes, past_reservation);
    return true;
  }

  void start(const QueuedJob& job, const std::vector<int>& nodes, bool past_reservation) {
    Started started{&job, {}, state_.expected_end(now_, job.timeout_s)};
    Start decision{job.id, {}};
    int cores = 0;
    const std::int64_t memory = job.shape.memory_mb;
    for (int node : nodes) {
      const int take = job.shape.whole_nodes() ? capacity_.total(node) : job.shape.cores_per_node;
      capacity_.set_free(node, capacity_.free(node) - take);
      capacity_.set_memory(node, capacity_.memory(node), std::max<std::int64_t>(capacity_.free_memory(node) - memory, 0));
      if (reservation_) {
        if (past_reservation) {
          reservation_->spare_at[node] -= take;
          reservation_->spare_memory_at[node] -= memory;
        }
        reservation_->beyond.set_free(node, std::min(capacity_.free(node), reservation_->spare_at[node]));
        reservation_->beyond.set_memory(node, capacity_.memory(node),
                                        std::clamp<std::int64_t>(reservation_->spare_memory_at[node], 0,
                                                                 capacity_.free_memory(node)));
      }
      started.nodes.emplace_back(node, take);
      decision.nodes.push_back(NodeCores{state_.nodes[node].name, take});
      cores += take;
    }
    running_cores_[job.share] += cores;
    used_[job.share] += cores * in_seconds(state_.horizon(job.timeout_s));
    started_.push_back(std::move(started));
    result_.starts.push_back(std::move(decision));
  }

  // Walks the expected ends of running work (and of this pass's starts) until `job` fits, and
  // holds the nodes it would take then.
  void reserve(const QueuedJob& job) {
    const int could_fit = capacity_.nodes_ever_fitting(job.shape);
    // It cannot fit even on an idle cluster: holding nodes for it would help nobody, and skipping
    // the walk keeps a queue of such jobs cheap.
    if (could_fit < job.shape.nodes) return;
    Capacity later = capacity_;
    const auto give_back = [&](const std::vector<std::pair<int, int>>& held, std::int64_t memory_mb) {
      for (const auto& [node, cores] : held) {
        if (node < later.node_count() && later.accepts(node)) {
          later.set_free(node, std::min(later.total(node), later.free(node) + cores));
          later.set_memory(node, later.memory(node), std::min(later.memory(node), later.free_memory(node) + memory_mb));
        }
      }
    };
    std::vector<const Started*> mine;
    for (const Started& s : started_) mine.push_back(&s);
    std::sort(mine.begin(), mine.end(), [](auto* a, auto* b) { return a->expected_end < b->expected_end; });

    std::optional<TimePoint> when;
    auto theirs = state_.running_by_end.begin();
    auto own = mine.begin();
    while (!when && (theirs != state_.running_by_end.end() || own != mine.end())) {
      TimePoint at;
      if (own == mine.end() || (theirs != state_.running_by_end.end() && theirs->first <= (*own)->expected_end)) {
        at = theirs->first;
        give_back(state_.running.at(theirs->second).nodes, state_.running.at(theirs->second).memory_mb);
        ++theirs;
      } else {
        at = (*own)->expected_end;
        give_back((*own)->nodes, (*own)->job->shape.memory_mb);
        ++own;
      }
      if (later.nodes_fitting(job.shape) >= job.shape.nodes) when = std::max(at, now_);
    }
    if (!when) return;  // defensive: by the last release every accepting node is idle
    const auto nodes = place(later, state_.group_of, job.shape, job.excluded);
    assert(nodes);
    ActiveReservation reservation{Reservation{job.id, *when, {}}, {}, {}, {}};
    for (int node = 0; node < later.node_count(); ++node) {
      reservation.spare_at.push_back(later.free(node));
      reservation.spare_memory_at.push_back(later.free_memory(node));
    }
    for (int node : *nodes) {
      const int take = job.shape.whole_nodes() ? later.total(node) : job.shape.cores_per_node;
      reservation.spare_at[node] -= take;
      reservation.spare_memory_at[node] -= job.shape.memory_mb;
      reservation.public_view.nodes.push_back(NodeCores{state_.nodes[node].name, take});
    }
    // Elsewhere spare_at >= free now (`later` only gained cores and memory), so only the reserved nodes differ.
    reservation.beyond = capacity_;
    for (int node : *nodes) {
      reservation.beyond.set_free(node, std::min(capacity_.free(node), reservation.spare_at[node]));
      reservation.beyond.set_memory(node, capacity_.memory(node),
                                    std::clamp<std::int64_t>(reservation.spare_memory_at[node], 0, capacity_.free_memory(node)));
    }
    reservation_ = std::move(reservation);
  }

  void note(JobId job, ReasonFacts facts) { reasons_[job] = facts; }

  void commit() {
    for (const Started& s : started_) {
      const QueuedJob job = *s.job;
      state_.unqueue(job.id);
      state_.hold_running(job.id, job.share, s.nodes, job.shape.memory_mb, now_, job.timeout_s);
    }
    double total = 0;
    double active_weight = 0;
    for (int share = 0; share < static_cast<int>(state_.shares.size()); ++share) {
      const ShareState& s = state_.shares[share];
      total += used_[share];
      if (!s.ready.empty() || s.held > 0 || s.running_cores > 0) active_weight += s.settings.weight;
    }
    for (int share = 0; share < static_cast<int>(state_.shares.size()); ++share) {
      ShareState& s = state_.shares[share];
      s.order_ratio = ratio(share);
      s.factor = fair_share_factor(used_[share], total, s.settings.weight, active_weight);
    }
    if (reservation_) result_.reservation = reservation_->public_view;
    state_.last = LastPass{now_, std::move(capacity_), std::move(reservation_), std::move(reasons_), reserved_cores_};
  }

  State& state_;
  TimePoint now_;
  Capacity capacity_;
  std::vector<double> used_;        // per share: decayed + expected usage, with this pass's starts
  std::vector<int> running_cores_;  // per share, with this pass's starts
  std::vector<JobQueue::const_iterator> cursor_;
  std::vector<Entry> heap_;
  std::int64_t reserved_cores_ = 0;
  std::optional<ActiveReservation> reservation_;
  std::vector<Started> started_;
  std::unordered_map<JobId, ReasonFacts> reasons_;
  PassResult result_;
};

}  // namespace

PassResult run_pass(State& state, TimePoint now) { return Pass(state, now).run(); }

}  // namespace trainyard::scheduler::detail
