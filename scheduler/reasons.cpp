// Why a pending job has not started, in words, from the facts the last pass left behind.
#include <cstdio>

#include "scheduler/state.h"

namespace trainyard::scheduler::detail {
namespace {

std::string fixed2(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  return buffer;
}

std::string plural(int n, const std::string& word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

std::string demand(const Shape& shape, int fit) {
  const std::string memory =
      shape.needs_memory() ? std::string(shape.whole_nodes() ? " with " : " and ") + std::to_string(shape.memory_mb) + " MiB free memory" : "";
  if (shape.whole_nodes()) {
    return "needs " + plural(shape.nodes, "whole free node") + memory + ", " + std::to_string(fit) + " free now";
  }
  return "needs " + plural(shape.nodes, "node") + " with " + std::to_string(shape.cores_per_node) + " free cores" + memory +
         ", " + std::to_string(fit) + " fit now";
}

int cores_wanted(const Shape& shape) { return shape.nodes * shape.cores_per_node; }

bool share_comes_first(const State& s, const ShareState& a, const ShareState& b) {
  const bool a_system = a.name == s.config.system_share;
  const bool b_system = b.name == s.config.system_share;
  if (a_system != b_system) return a_system;
  return a.order_ratio != b.order_ratio ? a.order_ratio < b.order_ratio : &a < &b;
}

// What the last pass would have said had it reached `job`.
ReasonFacts derive(const State& s, const QueuedJob& job) {
  const ShareState& share = s.shares[job.share];
  const Capacity& capacity = s.last.capacity;
  const std::optional<int> cap = share.settings.max_running_cores;
  if (cap && share.running_cores + cores_wanted(job.shape) > *cap) return {ReasonCode::share_cap};
  const int fit = capacity.nodes_fitting(job.shape);
  if (fit < job.shape.nodes) return shortfall(capacity, job.shape, fit);
  if (const auto& r = s.last.reservation) {
    const bool ends_before = job.timeout_s && s.last.at + std::chrono::seconds(*job.timeout_s) <= r->public_view.at;
    if (!ends_before && r->beyond.nodes_fitting(job.shape) < job.shape.nodes) {
      return {ReasonCode::reservation, fit, r->public_view.job, r->public_view.at};
    }
  }
  if (share.running_cores > 0 && capacity.free_cores() - cores_wanted(job.shape) < s.last.reserved_cores) {
    return {ReasonCode::compute_reservation};
  }
  return {ReasonCode::priority, fit};
}

std::string behind_whom(const State& s, const QueuedJob& job) {
  const ShareState& mine = s.shares[job.share];
  const ShareState* first = nullptr;
  for (const ShareState& other : s.shares) {
    if (&other == &mine || other.ready.empty() || !share_comes_first(s, other, mine)) continue;
    if (!first || share_comes_first(s, other, *first)) first = &other;
  }
  if (first) {
    if (first->name == s.config.system_share) return "behind the system share " + first->name + ", which goes first";
    const bool higher = first->factor > mine.factor;
    return "behind share " + first->name + (higher ? " whose fair-share factor " : " with the same fair-share factor ") +
           fixed2(first->factor) + (higher ? " is higher than this share's " + fixed2(mine.factor) : "");
  }
  const int ahead = static_cast<int>(mine.ready.order_of_key(job.key));
  if (ahead > 0) return "behind " + plural(ahead, "job") + " of share " + mine.name + " with higher priority or earlier submission";
  return "first in line; starts in the next scheduling pass if it still fits";
}

std::string words(const State& s, const QueuedJob& job, const ReasonFacts& facts) {
  const ShareState& share = s.shares[job.share];
  switch (facts.code) {
    case ReasonCode::resources:
      return demand(job.shape, facts.nodes_fit) +
             (facts.until != TimePoint{} ? "; reserved to start by " + format_time(facts.until) : "");
    case ReasonCode::nodes_unavailable:
      return "needs " + plural(job.shape.nodes, "node") + " that can hold " +
             (job.shape.whole_nodes() ? "a rank each" : "its ranks") + " and only " + std::to_string(facts.nodes_fit) +
             " in service could, even idle: it waits until more nodes are in service (registered, undrained, or healthy "
             "again), as Slurm's ReqNodeNotAvail";
    case ReasonCode::priority:
      return behind_whom(s, job);
    case ReasonCode::reservation:
      return "held for reserved job " + std::to_string(facts.other) + " until " + format_time(facts.until);
    case ReasonCode::share_cap:
      return "share cap of " + std::to_string(share.settings.max_running_cores.value_or(0)) +
             " running cores reached (" + std::to_string(share.running_cores) + " running)";
    case ReasonCode::compute_reservation:
      return std::to_string(s.last.reserved_cores) + " cores are kept free for shares with no running work, and share " +
             share.name + " has " + std::to_string(share.running_cores) + " running";
    case ReasonCode::dependency: {
      if (!job.dependency_reason.empty()) return job.dependency_reason;
      std::string ids;
      for (JobId id : job.waiting_for) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
      return "waiting for job" + std::string(job.waiting_for.size() == 1 ? " " : "s ") + ids + " to succeed";
    }
    case ReasonCode::array_limit: {
      const ArrayGate& gate = s.arrays.at(*job.array);
      const std::size_t admitted = gate.admitted.size();
      return "array " + std::to_string(*job.array) + " runs at most " + std::to_string(gate.limit) +
             (gate.limit == 1 ? " task" : " tasks") + " at once (%" + std::to_string(gate.limit) + "), and " +
             std::to_string(admitted) + (admitted == 1 ? " is" : " are") + " queued or running";
    }
    case ReasonCode::backoff:
      return "retry backoff: not before " + format_time(job.not_before.value_or(TimePoint{}));
  }
  return {};
}

}  // namespace

ReasonFacts shortfall(const Capacity& capacity, const Shape& shape, int fit) {
  if (const int ever = capacity.nodes_ever_fitting(shape); ever < shape.nodes) return {ReasonCode::nodes_unavailable, ever};
  return {ReasonCode::resources, fit};
}

PendingReason explain(const State& s, const QueuedJob& job) {
  ReasonFacts facts;
  if (job.gated) {
    facts.code = ReasonCode::array_limit;
  } else if (!job.ready) {
    facts.code = job.waiting_for.empty() ? ReasonCode::backoff : ReasonCode::dependency;
  } else if (auto it = s.last.reasons.find(job.id); it != s.last.reasons.end()) {
    facts = it->second;
  } else {
    facts = derive(s, job);
  }
  return PendingReason{facts.code, words(s, job, facts)};
}

}  // namespace trainyard::scheduler::detail
