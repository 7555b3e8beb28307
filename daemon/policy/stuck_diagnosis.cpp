#include "daemon/policy/stuck_diagnosis.h"

#include "daemon/policy/process_where.h"

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

// A rank judged on idleness has no step or phase to name: `idle_verb` says what it does.
std::string describe(const std::vector<const RankProgress*>& ranks, const std::string& verb, const std::string& idle_verb) {
  const RankProgress& first = *ranks.front();
  const std::string who = rank_list(ranks) + " (" + node_list(ranks) + ") ";
  if (first.judged_on_idleness) return who + idle_verb;
  const std::string phase = first.phase.empty() ? "an unreported phase" : first.phase;
  return who + verb + " in " + phase + " at step " + std::to_string(first.step);
}

// Whether the rank waits on its peers: where its processes were says, else its last reported phase.
bool waits(const RankProgress& r) {
  switch (judge_where(r.where)) {
    case WhereVerdict::waiting_on_peers: return true;
    case WhereVerdict::stopped:
    case WhereVerdict::hung_itself: return false;
    case WhereVerdict::unknown: break;
  }
  return is_collective_phase(r.phase);
}

// "; where: node-b RANK 1 pid 812 stopped (state T); node-a RANK 0 pid 77 sleeping: ...", the
// culprits' processes first.
std::string where_part(const std::vector<const RankProgress*>& culprits, const std::vector<RankProgress>& ranks) {
  std::vector<const RankProgress*> order(culprits);
  for (const auto& r : ranks) {
    if (std::find(order.begin(), order.end(), &r) == order.end()) order.push_back(&r);
  }
  std::string out;
  for (const auto* r : order) {
    for (const auto& p : r->where) {
      out += (out.empty() ? "; where: " : "; ") + r->node + " RANK " + std::to_string(p.rank) + " " + where_text(p);
    }
  }
  return out;
}

// Groups ranks of equal (step, phase), and when `by_verdict` of equal verdict on where they were
// (a stopped rank and a hung one are described apart), in rank order of each group's first member.
std::vector<std::vector<const RankProgress*>> grouped(const std::vector<const RankProgress*>& ranks, bool by_verdict = false) {
  std::vector<std::vector<const RankProgress*>> groups;
  for (const auto* r : ranks) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
      return g.front()->step == r->step && g.front()->phase == r->phase &&
             (!by_verdict || judge_where(g.front()->where) == judge_where(r->where));
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

std::optional<StuckDiagnosis> diagnose_stuck(const std::vector<RankProgress>& ranks) {
  // A rank judged on idleness that waits on its peers has not stopped while one of them is still
  // within its allowance: it waits for work going on (the others at a barrier while rank 0 evaluates).
  const bool a_peer_is_within = std::any_of(ranks.begin(), ranks.end(), [](const RankProgress& r) {
    return r.silent < r.allowance.limit;
  });
  std::vector<const RankProgress*> stopped;
  for (const auto& r : ranks) {
    const bool waits_for_work = r.judged_on_idleness && waits(r) && a_peer_is_within;
    if (r.silent >= r.allowance.limit && !waits_for_work) stopped.push_back(&r);
  }
  if (stopped.empty()) return std::nullopt;

  // The culprits are at the lowest step a stopped rank is at. Stopped ranks there that are not
  // inside a collective hang themselves; when all of them are inside one, they wait for a rank at
  // the same step that is not (still within its own allowance, since it stopped later); when there
  // is none, the collective itself is the fault and they are all named.
  const std::int64_t lowest = (*std::min_element(stopped.begin(), stopped.end(), [](const auto* a, const auto* b) {
                                return a->step < b->step;
                              }))->step;
  const auto stopped_rank = [&](const RankProgress* r) { return std::find(stopped.begin(), stopped.end(), r) != stopped.end(); };
  std::vector<const RankProgress*> behind, computing, holding_up, waiting, advancing;
  for (const auto* r : stopped) {
    if (r->step == lowest) behind.push_back(r);
  }
  for (const auto* r : behind) {
    if (!waits(*r)) computing.push_back(r);
  }
  // A stopped process explains the rest: whoever else looks hung is stuck behind it.
  if (std::any_of(computing.begin(), computing.end(), [](const auto* r) { return judge_where(r->where) == WhereVerdict::stopped; })) {
    std::erase_if(computing, [](const auto* r) { return judge_where(r->where) != WhereVerdict::stopped; });
  }
  for (const auto& r : ranks) {
    if (r.step == lowest && !stopped_rank(&r) && !waits(r)) holding_up.push_back(&r);
  }
  const std::vector<const RankProgress*>& culprits =
      !computing.empty() ? computing : (!holding_up.empty() ? holding_up : behind);
  // A rank that got past the culprits' step and is within its allowance does not wait on them; one
  // at their step (blocked in the collective they never joined) does, stopped or not yet. A rank
  // judged on idleness has no step: within its allowance, it waits when where it is says so.
  for (const auto& r : ranks) {
    if (std::find(culprits.begin(), culprits.end(), &r) != culprits.end()) continue;
    const bool past = r.judged_on_idleness ? !waits(r) : r.step > lowest;
    (!stopped_rank(&r) && past ? advancing : waiting).push_back(&r);
  }

  StuckDiagnosis d;
  for (const auto* r : culprits) d.culprits.push_back(r->rank);
  const RankProgress& first = *culprits.front();
  const auto seconds = std::chrono::duration<double>(first.allowance.limit).count();
  char head[96];
  std::snprintf(head, sizeof head, first.judged_on_idleness ? "no output, CPU or I/O for %gs: " : "no training progress for %gs: ",
                seconds);
  d.text = head;
  std::string parts;
  for (const auto& group : grouped(culprits, true)) {
    const bool stopped = judge_where(group.front()->where) == WhereVerdict::stopped;
    parts += (parts.empty() ? "" : "; ") + describe(group, "blocked", stopped ? "stopped" : "hung");
  }
  for (const auto& group : grouped(waiting)) parts += "; " + describe(group, "waiting", "waiting on them");
  for (const auto& group : grouped(advancing)) parts += "; " + describe(group, "still advancing, last", "still active");
  d.text += parts + " (allowed: " + first.allowance.basis + ")" + where_part(culprits, ranks);
  return d;
}

}  // namespace trainyard::daemon
