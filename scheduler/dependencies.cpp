#include "scheduler/dependencies.h"

#include <algorithm>

namespace trainyard::scheduler {
namespace {

std::string what(const Dependency& d) {
  switch (d.condition) {
    case DependencyCondition::afterok: return "to succeed (afterok)";
    case DependencyCondition::afterany: return "to end (afterany)";
    case DependencyCondition::afternotok: return "to end without success (afternotok)";
    case DependencyCondition::aftercorr: return "to succeed (aftercorr)";
  }
  return "";
}

DependencyCheck check_one(const ResolvedDependency& r) {
  const Dependency& d = r.dependency;
  const std::string name = to_string(d.condition) + ":" + std::to_string(d.job);
  const bool needs_success = d.condition == DependencyCondition::afterok || d.condition == DependencyCondition::aftercorr;
  DependencyCheck check;
  bool any_failed = false;
  for (const UpstreamJob& job : r.jobs) {
    if (!is_terminal(job.state)) {
      check.waiting_for.push_back(job.id);
      continue;
    }
    if (job.state == JobState::succeeded) continue;
    any_failed = true;
    if (needs_success) {
      return {DependencyVerdict::never, {},
              "dependency " + name + " can never be met: job " + job.ref + " ended " + to_string(job.state)};
    }
  }
  if (!check.waiting_for.empty()) {
    const UpstreamJob& first = *std::find_if(r.jobs.begin(), r.jobs.end(), [](const UpstreamJob& j) { return !is_terminal(j.state); });
    const std::size_t more = check.waiting_for.size() - 1;
    check.verdict = DependencyVerdict::waiting;
    check.reason = "waiting for job " + first.ref +
                   (more > 0 ? " and " + std::to_string(more) + " other" + (more == 1 ? "" : "s") : "") + " " + what(d);
    return check;
  }
  if (d.condition == DependencyCondition::afternotok && !any_failed && !r.jobs.empty()) {
    return {DependencyVerdict::never, {}, "dependency " + name + " can never be met: job " + r.jobs.front().ref + " SUCCEEDED"};
  }
  return check;
}

}  // namespace

DependencyCheck check_dependencies(const std::vector<ResolvedDependency>& dependencies) {
  DependencyCheck all;
  for (const ResolvedDependency& r : dependencies) {
    DependencyCheck one = check_one(r);
    if (one.verdict == DependencyVerdict::never) return one;
    if (one.verdict == DependencyVerdict::waiting) {
      if (all.verdict == DependencyVerdict::met) all.reason = std::move(one.reason);
      all.verdict = DependencyVerdict::waiting;
      all.waiting_for.insert(all.waiting_for.end(), one.waiting_for.begin(), one.waiting_for.end());
    }
  }
  return all;
}

}  // namespace trainyard::scheduler
