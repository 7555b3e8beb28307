#include "daemon/goodput.h"

#include <algorithm>
#include <chrono>

#include "checkpoint/checkpoint.h"

namespace trainyard {
namespace {

double seconds_between(TimePoint from, TimePoint to) {
  return std::max(0.0, std::chrono::duration<double>(to - from).count());
}

// Moves up to `amount` from `from` to `to`; returns what moved.
double take(double& from, double& to, double amount) {
  const double moved = std::clamp(amount, 0.0, from);
  from -= moved;
  to += moved;
  return moved;
}

// One attempt's time by cause; `kept_until` is the step the next attempt resumed from (none: the
// attempt is the last, and all of its steps are kept).
Goodput attempt_goodput(const Attempt& a, std::optional<std::int64_t> kept_until, TimePoint now) {
  const double cores = static_cast<double>(a.nodes.size()) * a.cores_per_node;
  const TimePoint end = a.ended_at.value_or(now);
  Goodput g;
  g.allocated_core_s = seconds_between(a.created_at, end) * cores;
  // Records stored before launch times were kept count their whole start as restart.
  const TimePoint launched = a.launched_at.value_or(a.created_at);
  if (!a.launched_at && !a.started_at) {
    g.preflight_core_s = g.allocated_core_s;
    return g;
  }
  g.preflight_core_s = seconds_between(a.created_at, std::min(launched, end)) * cores;
  if (!a.started_at) {
    g.restart_core_s = seconds_between(launched, end) * cores;
    return g;
  }
  const bool failed = a.state == AttemptState::failed;
  const std::int64_t first = a.resumed_from ? checkpoint::step_of(*a.resumed_from).value_or(0) : 0;
  const std::int64_t steps = std::max<std::int64_t>(0, a.steps_completed - first);
  if (steps == 0 || !a.last_progress_at) {
    // No steps to judge by: a running or finished command job's time counts as work.
    g.restart_core_s = seconds_between(launched, *a.started_at) * cores;
    (failed ? g.stalled_core_s : g.productive_core_s) += seconds_between(*a.started_at, end) * cores;
    return g;
  }
  // When the first step began: one average step before it completed (never before the launch,
  // whatever the agent's clock says).
  TimePoint stepping_from = std::max(launched, *a.started_at);
  if (a.first_step_at) {
    const auto between = *a.last_progress_at - *a.first_step_at;
    const auto per_step = steps > 1 ? between / (steps - 1) : TimePoint::duration::zero();
    stepping_from = std::max(launched, *a.first_step_at - per_step);
  }
  g.restart_core_s = seconds_between(launched, stepping_from) * cores;
  double stepping = seconds_between(stepping_from, *a.last_progress_at) * cores;
  double after = seconds_between(*a.last_progress_at, end) * cores;
  const double checkpoint = static_cast<double>(a.checkpoint_ms) / 1000.0 * cores;
  const double from_steps = take(stepping, g.checkpoint_core_s, checkpoint);
  take(after, g.checkpoint_core_s, checkpoint - from_steps);
  // Steps past the point the next attempt resumed from were done again.
  const std::int64_t kept = kept_until ? std::clamp<std::int64_t>(*kept_until - first, 0, steps) : steps;
  g.productive_core_s = stepping * static_cast<double>(kept) / static_cast<double>(steps);
  g.redone_core_s = stepping - g.productive_core_s;
  (failed ? g.stalled_core_s : g.productive_core_s) += after;
  return g;
}

}  // namespace

Goodput& Goodput::operator+=(const Goodput& o) {
  allocated_core_s += o.allocated_core_s;
  productive_core_s += o.productive_core_s;
  preflight_core_s += o.preflight_core_s;
  restart_core_s += o.restart_core_s;
  checkpoint_core_s += o.checkpoint_core_s;
  redone_core_s += o.redone_core_s;
  stalled_core_s += o.stalled_core_s;
  other_core_s += o.other_core_s;
  return *this;
}

Goodput job_goodput(std::span<const Attempt> attempts, TimePoint now) {
  Goodput total;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    std::optional<std::int64_t> kept_until;
    if (i + 1 < attempts.size()) {
      const auto& next = attempts[i + 1].resumed_from;
      kept_until = next ? checkpoint::step_of(*next).value_or(0) : 0;
    }
    total += attempt_goodput(attempts[i], kept_until, now);
  }
  const double accounted = total.productive_core_s + total.preflight_core_s + total.restart_core_s +
                           total.checkpoint_core_s + total.redone_core_s + total.stalled_core_s;
  total.other_core_s = std::max(0.0, total.allocated_core_s - accounted);
  return total;
}

Json to_json(const Goodput& g) {
  return {{"goodput", g.ratio()},
          {"allocated_core_s", g.allocated_core_s},
          {"productive_core_s", g.productive_core_s},
          {"lost_core_s",
           {{"preflight", g.preflight_core_s},
            {"restart", g.restart_core_s},
            {"checkpoint", g.checkpoint_core_s},
            {"redone", g.redone_core_s},
            {"stalled", g.stalled_core_s},
            {"other", g.other_core_s}}}};
}

}  // namespace trainyard
