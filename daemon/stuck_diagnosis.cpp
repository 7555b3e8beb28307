#include "daemon/stuck_diagnosis.h"

#include <algorithm>
#include <cstdio>

namespace trainyard::daemon {
namespace {

// "rank 3" or "ranks 0,1,2".
std::string rank_list(const std::vector<const RankProgress*>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i) out += ',';  // appended apart: `"," + std::to_string(...)` trips g++ 12's -Wrestrict at -O3
    out += std::to_string(ranks[i]->rank);
  }
  return out;
}

std::string node_list(const std::vector<const RankProgress*>& ranks) {
  std::string out;
  for (const auto* r : ranks) out += (out.empty() ? "" : ",") + r->node;
  return out;
}

std::string describe(const std::vector<const RankProgress*>& ranks, const std::string& verb) {
  const RankProgress& first = *ranks.front();
  const std::string phase = first.phase.empty() ? "an unreported phase" : first.phase;
  return rank_list(ranks) + " (" + node_list(ranks) + ") " + verb + " in " + phase + " at step " + std::to_string(first.step);
}

// Groups ranks of equal (step, phase), in rank order of each group's first member.
std::vector<std::vector<const RankProgress*>> grouped(const std::vector<const RankProgress*>& ranks) {
  std::vector<std::vector<const RankProgress*>> groups;
  for (const auto* r : ranks) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return g.front()->step == r->step && g.front()->phase == r->phase;
    });
    if (it == groups.end()) {
      groups.push_back({r});
    } else {
      it->push_back(r);
    }
  }
  return groups;
}

}  // namespace

bool is_collective_phase(const std::string& phase) {
  return phase == "all-reduce" || phase == "all-gather" || phase == "reduce-scatter" || phase == "collective";
}

std::optional<StuckDiagnosis> diagnose_stuck(const std::vector<RankProgress>& ranks, Millis stuck_after) {
  if (ranks.empty()) return std::nullopt;
  const bool someone_advanced = std::any_of(ranks.begin(), ranks.end(), [&](const RankProgress& r) { return r.silent < stuck_after; });
  if (someone_advanced) return std::nullopt;

  const std::int64_t lowest = std::min_element(ranks.begin(), ranks.end(), [](const auto& a, const auto& b) {
                                return a.step < b.step;
                              })->step;
  std::vector<const RankProgress*> behind, computing, others;
  for (const auto& r : ranks) {
    if (r.step == lowest) behind.push_back(&r);
  }
  for (const auto* r : behind) {
    if (!is_collective_phase(r->phase)) computing.push_back(r);
  }
  const std::vector<const RankProgress*>& culprits = computing.empty() ? behind : computing;
  for (const auto& r : ranks) {
    if (std::find(culprits.begin(), culprits.end(), &r) == culprits.end()) others.push_back(&r);
  }

  StuckDiagnosis d;
  for (const auto* r : culprits) d.culprits.push_back(r->rank);
  const auto seconds = std::chrono::duration<double>(stuck_after).count();
  char head[96];
  std::snprintf(head, sizeof head, "no training progress for %gs: ", seconds);
  d.text = head;
  std::string parts;
  for (const auto& group : grouped(culprits)) parts += (parts.empty() ? "" : "; ") + describe(group, "blocked");
  for (const auto& group : grouped(others)) parts += "; " + describe(group, "waiting");
  d.text += parts;
  return d;
}

}  // namespace trainyard::daemon
