#include "daemon/goodput.h"

#include <algorithm>
#include <cctype>
#include <chrono>

namespace trainyard {
namespace {

double seconds_between(TimePoint from, TimePoint to) {
  return std::max(0.0, std::chrono::duration<double>(to - from).count());
}

}  // namespace

Goodput& Goodput::operator+=(const Goodput& o) {
  allocated_core_s += o.allocated_core_s;
  productive_core_s += o.productive_core_s;
  start_core_s += o.start_core_s;
  stalled_core_s += o.stalled_core_s;
  redone_core_s += o.redone_core_s;
  other_core_s += o.other_core_s;
  return *this;
}

std::optional<std::int64_t> checkpoint_step(const std::string& path) {
  const auto at = path.rfind("step-");
  if (at == std::string::npos) return std::nullopt;
  std::int64_t step = 0;
  bool digits = false;
  for (std::size_t i = at + 5; i < path.size() && std::isdigit(static_cast<unsigned char>(path[i])); ++i) {
    step = step * 10 + (path[i] - '0');
    digits = true;
  }
  return digits ? std::optional(step) : std::nullopt;
}

Goodput job_goodput(std::span<const Attempt> attempts, TimePoint now) {
  Goodput total;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    const Attempt& a = attempts[i];
    const double cores = static_cast<double>(a.nodes.size()) * a.cores_per_node;
    const TimePoint end = a.ended_at.value_or(now);
    Goodput g;
    g.allocated_core_s = seconds_between(a.created_at, end) * cores;
    if (!a.started_at) {  // never ran: all of it went to starting (pre-flight, launch)
      g.start_core_s = g.allocated_core_s;
      total += g;
      continue;
    }
    const std::int64_t first = a.resumed_from ? checkpoint_step(*a.resumed_from).value_or(0) : 0;
    const std::int64_t steps = std::max<std::int64_t>(0, a.steps_completed - first);
    const bool failed = a.state == AttemptState::failed;
    if (steps == 0 || !a.last_progress_at) {
      g.start_core_s = seconds_between(a.created_at, *a.started_at) * cores;
      // No steps to judge by: a running or finished command job's time counts as work.
      if (failed) {
        g.stalled_core_s = seconds_between(*a.started_at, end) * cores;
      } else {
        g.productive_core_s = seconds_between(*a.started_at, end) * cores;
      }
      total += g;
      continue;
    }
    const double stepping = seconds_between(*a.started_at, *a.last_progress_at) * cores;
    // Steps past the point the next attempt resumed from were done again.
    std::int64_t kept = steps;
    if (i + 1 < attempts.size()) {
      const Attempt& next = attempts[i + 1];
      const std::int64_t resumed = next.resumed_from ? checkpoint_step(*next.resumed_from).value_or(0) : 0;
      kept = std::clamp<std::int64_t>(resumed - first, 0, steps);
    }
    g.start_core_s = seconds_between(a.created_at, *a.started_at) * cores;
    g.productive_core_s = stepping * static_cast<double>(kept) / static_cast<double>(steps);
    g.redone_core_s = stepping - g.productive_core_s;
    const double after = seconds_between(*a.last_progress_at, end) * cores;
    (failed ? g.stalled_core_s : g.productive_core_s) += after;
    total += g;
  }
  total.other_core_s = std::max(0.0, total.allocated_core_s - total.productive_core_s - total.start_core_s -
                                         total.stalled_core_s - total.redone_core_s);
  return total;
}

Json to_json(const Goodput& g) {
  return {{"goodput", g.ratio()},
          {"allocated_core_s", g.allocated_core_s},
          {"productive_core_s", g.productive_core_s},
          {"lost_core_s",
           {{"start", g.start_core_s}, {"stalled", g.stalled_core_s}, {"redone", g.redone_core_s}, {"other", g.other_core_s}}}};
}

}  // namespace trainyard
