#include "scheduler/preemption.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "proto/errors.h"

namespace trainyard::scheduler {
namespace {

std::string fixed2(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  return buffer;
}

// Free cores per node as victims are taken away, and how many nodes could hold one rank.
class Room {
 public:
  Room(const std::vector<NodeRoom>& nodes, const PreemptionRequest& waiting) : nodes_(nodes), waiting_(waiting) {
    free_.reserve(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      index_[nodes[i].name] = i;
      free_.push_back(nodes[i].free_cores);
      if (holds_a_rank(i)) ++fitting_;
    }
  }
  bool fits() const { return fitting_ >= waiting_.nodes; }
  void give_back(const PreemptionCandidate& victim, int sign) {
    for (const NodeCores& held : victim.nodes) {
      auto it = index_.find(held.node);
      if (it == index_.end()) continue;
      const bool before = holds_a_rank(it->second);
      free_[it->second] += sign * held.cores;
      fitting_ += static_cast<int>(holds_a_rank(it->second)) - static_cast<int>(before);
    }
  }

 private:
  bool holds_a_rank(std::size_t i) const {
    const NodeRoom& node = nodes_[i];
    const int wanted = waiting_.cores_per_node.value_or(node.cores);
    return node.accepts_work && wanted > 0 && wanted <= node.cores && free_[i] >= wanted;
  }

  const std::vector<NodeRoom>& nodes_;
  const PreemptionRequest& waiting_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<int> free_;
  int fitting_ = 0;
};

int cores_of(const PreemptionCandidate& c) {
  int cores = 0;
  for (const NodeCores& n : c.nodes) cores += n.cores;
  return cores;
}

}  // namespace

void validate(const PreemptionConfig& config) {
  if (!(config.below_fair_share > 0 && config.below_fair_share <= 1.0)) {
    throw InvalidInput("preempt-below-fair-share-pct", "must be in (0, 1]: the waiting share must be below its fair share");
  }
  if (!(config.above_fair_share > config.below_fair_share)) {
    throw InvalidInput("preempt-above-fair-share-pct", "must be above preempt-below-fair-share-pct (the gap keeps shares from trading nodes)");
  }
  if (config.min_run_time < Millis(0)) throw InvalidInput("preempt-min-run-s", "must not be negative");
}

std::vector<ShareStanding> share_standings(const std::vector<ShareRow>& rows) {
  double active_weight = 0;
  for (const ShareRow& row : rows) {
    if (row.pending_jobs > 0 || row.running_cores > 0) active_weight += row.weight;
  }
  std::vector<ShareStanding> standings;
  for (const ShareRow& row : rows) {
    if ((row.pending_jobs == 0 && row.running_cores == 0) || row.weight <= 0) continue;
    standings.push_back({row.name, row.normalized_usage / (row.weight / active_weight)});
  }
  return standings;
}

std::optional<PreemptionPlan> plan_preemption(const PreemptionRequest& waiting,
                                              const std::vector<PreemptionCandidate>& running,
                                              const std::vector<NodeRoom>& nodes,
                                              const std::vector<ShareStanding>& standings,
                                              const PreemptionConfig& config, TimePoint now) {
  if (!config.enabled) return std::nullopt;
  std::unordered_map<std::string, double> standing;
  for (const ShareStanding& s : standings) standing[s.share] = s.standing;
  const auto standing_of = [&standing](const std::string& share) {
    auto it = standing.find(share);
    return it == standing.end() ? 1.0 : it->second;
  };
  const double mine = standing_of(waiting.share);
  if (mine >= config.below_fair_share) return std::nullopt;
  Room room(nodes, waiting);
  if (room.fits()) return std::nullopt;  // it fits now: what holds it back is not the running work

  std::vector<const PreemptionCandidate*> eligible;
  for (const PreemptionCandidate& c : running) {
    const bool lower_priority_from_a_served_share = waiting.priority < c.priority && mine >= 1.0;
    if (c.share == waiting.share || config.exempt_shares.contains(c.share) ||
        standing_of(c.share) <= config.above_fair_share || now - c.started_at < config.min_run_time ||
        lower_priority_from_a_served_share) {
      continue;
    }
    eligible.push_back(&c);
  }
  std::sort(eligible.begin(), eligible.end(), [](const PreemptionCandidate* a, const PreemptionCandidate* b) {
    if (a->steps_lost != b->steps_lost) return a->steps_lost < b->steps_lost;
    if (cores_of(*a) != cores_of(*b)) return cores_of(*a) < cores_of(*b);
    if (a->started_at != b->started_at) return a->started_at > b->started_at;
    return a->job < b->job;
  });

  std::vector<const PreemptionCandidate*> chosen;
  for (const PreemptionCandidate* c : eligible) {
    if (room.fits()) break;
    room.give_back(*c, +1);
    chosen.push_back(c);
  }
  if (!room.fits()) return std::nullopt;
  // The dearest first: any victim the others make unnecessary keeps running.
  for (auto it = chosen.rbegin(); it != chosen.rend();) {
    room.give_back(**it, -1);
    if (room.fits()) {
      it = decltype(it)(chosen.erase(std::next(it).base()));
    } else {
      room.give_back(**it, +1);
      ++it;
    }
  }

  PreemptionPlan plan;
  std::string victims;
  for (const PreemptionCandidate* c : chosen) {
    plan.victims.push_back(c->job);
    victims += (victims.empty() ? "" : ", ") + std::to_string(c->job) + " of share " + c->share + " (standing " +
               fixed2(standing_of(c->share)) + ", " + std::to_string(c->steps_lost) + " steps since its checkpoint)";
  }
  plan.reason = "job " + std::to_string(waiting.job) + " of share " + waiting.share + " (standing " + fixed2(mine) +
                ", below its fair share) needs " + std::to_string(waiting.nodes) + " node" +
                (waiting.nodes == 1 ? "" : "s") + "; preempting job" + (chosen.size() == 1 ? " " : "s ") + victims;
  return plan;
}

}  // namespace trainyard::scheduler
