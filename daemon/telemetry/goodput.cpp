#include "daemon/telemetry/goodput.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "proto/seconds.h"

namespace trainyard::daemon {
namespace {

// Moves up to `amount` from `from` to `to`; returns what moved.
double take(double& from, double& to, double amount) {
  const double moved = std::clamp(amount, 0.0, from);
  from -= moved;
  to += moved;
  return moved;
}

// A stretch of an attempt's time and the core-seconds it holds by cause, spread evenly over it, so
// that a window can take its share of each.
struct Segment {
  TimePoint from, to;
  Goodput held;
};

// Splits [from, to] (cores wide) into a segment whose core-seconds go to one cause.
Segment segment_of(TimePoint from, TimePoint to, double cores, double Goodput::*cause) {
  Segment s{from, std::max(from, to), {}};
  s.held.*cause = seconds_between(from, to) * cores;
  return s;
}

// One attempt's time by cause, as consecutive segments (the allocation itself is the first);
// `kept_until` is the step the next attempt resumed from (none: the attempt is the last, and all of
// its steps are kept); `first_start`: no earlier attempt of the job launched.
std::vector<Segment> attempt_segments(const Attempt& a, std::optional<std::int64_t> kept_until, bool first_start,
                                      TimePoint now) {
  const double cores = static_cast<double>(a.nodes.size()) * a.cores_per_node;
  const TimePoint end = a.ended_at.value_or(now);
  std::vector<Segment> out = {segment_of(a.created_at, end, cores, &Goodput::allocated_core_s)};
  // Records stored before launch times were kept count their whole start as restart.
  const TimePoint launched = a.launched_at.value_or(a.created_at);
  if (!a.launched_at && !a.started_at) {
    out.push_back(segment_of(a.created_at, end, cores, &Goodput::preflight_core_s));
    return out;
  }
  out.push_back(segment_of(a.created_at, std::min(launched, end), cores, &Goodput::preflight_core_s));
  if (!a.started_at) {
    out.push_back(segment_of(launched, end, cores, &Goodput::restart_core_s));
    return out;
  }
  const bool failed = a.state == AttemptState::failed;
  const auto after_work = failed ? &Goodput::stalled_core_s : &Goodput::productive_core_s;
  const auto start_up = first_start && !a.resumed_from ? &Goodput::productive_core_s : &Goodput::restart_core_s;
  const std::int64_t first = a.resumed_from ? checkpoint::step_of(*a.resumed_from).value_or(0) : 0;
  const std::int64_t steps = std::max<std::int64_t>(0, a.steps_completed - first);
  if (steps == 0 || !a.last_progress_at) {
    // No steps to judge by: its time since launch is neither kept nor lost, as far as anyone can tell.
    out.push_back(segment_of(launched, end, cores, &Goodput::unmeasured_core_s));
    return out;
  }
  // When the first step began: one average step before it completed (never before the launch,
  // whatever the agent's clock says).
  TimePoint stepping_from = std::max(launched, *a.started_at);
  if (a.first_step_at) {
    const auto between = *a.last_progress_at - *a.first_step_at;
    const auto per_step = steps > 1 ? between / (steps - 1) : TimePoint::duration::zero();
    stepping_from = std::max(launched, *a.first_step_at - per_step);
  }
  out.push_back(segment_of(launched, stepping_from, cores, start_up));
  Segment stepping{stepping_from, std::max(stepping_from, *a.last_progress_at), {}};
  Segment after{*a.last_progress_at, std::max(*a.last_progress_at, end), {}};
  double stepping_s = seconds_between(stepping_from, *a.last_progress_at) * cores;
  double after_s = seconds_between(*a.last_progress_at, end) * cores;
  const double checkpoint = static_cast<double>(a.checkpoint_ms) / 1000.0 * cores;
  const double from_steps = take(stepping_s, stepping.held.checkpoint_core_s, checkpoint);
  take(after_s, after.held.checkpoint_core_s, checkpoint - from_steps);
  // Steps past the point the next attempt resumed from were done again.
  const std::int64_t kept = kept_until ? std::clamp<std::int64_t>(*kept_until - first, 0, steps) : steps;
  // Each share by its own product: a difference could round below zero, and a category never is.
  stepping.held.productive_core_s = stepping_s * static_cast<double>(kept) / static_cast<double>(steps);
  stepping.held.redone_core_s = stepping_s * static_cast<double>(steps - kept) / static_cast<double>(steps);
  after.held.*after_work += after_s;
  out.push_back(stepping);
  out.push_back(after);
  return out;
}

// The part of `held` that falls in [from, to]; a segment of no length is wholly in or out.
Goodput share_in(const Segment& s, TimePoint from, TimePoint to) {
  const double length = seconds_between(s.from, s.to);
  const double inside = seconds_between(std::max(s.from, from), std::min(s.to, to));
  const double fraction = length > 0 ? inside / length : (s.from >= from && s.from <= to ? 1.0 : 0.0);
  Goodput g = s.held;
  g *= fraction;
  return g;
}

Goodput goodput_in(std::span<const Attempt> attempts, TimePoint now, TimePoint from, TimePoint to) {
  Goodput total;
  bool first_start = true;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    // What the job went on from: the next attempt that chose a checkpoint or launched. One placed
    // and never launched (its node lost or its pre-flight failed first) redid nothing.
    std::optional<std::int64_t> kept_until;
    for (std::size_t j = i + 1; j < attempts.size() && !kept_until; ++j) {
      const Attempt& next = attempts[j];
      if (next.resumed_from) {
        kept_until = checkpoint::step_of(*next.resumed_from).value_or(0);
      } else if (next.launched_at || next.started_at) {
        kept_until = 0;
      }
    }
    for (const Segment& s : attempt_segments(attempts[i], kept_until, first_start, now)) total += share_in(s, from, to);
    if (attempts[i].launched_at || attempts[i].started_at) first_start = false;
  }
  const double accounted = total.productive_core_s + total.preflight_core_s + total.restart_core_s +
                           total.checkpoint_core_s + total.redone_core_s + total.stalled_core_s +
                           total.unmeasured_core_s;
  total.other_core_s = std::max(0.0, total.allocated_core_s - accounted);
  return total;
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
  unmeasured_core_s += o.unmeasured_core_s;
  other_core_s += o.other_core_s;
  return *this;
}

Goodput& Goodput::operator*=(double factor) {
  allocated_core_s *= factor;
  productive_core_s *= factor;
  preflight_core_s *= factor;
  restart_core_s *= factor;
  checkpoint_core_s *= factor;
  redone_core_s *= factor;
  stalled_core_s *= factor;
  unmeasured_core_s *= factor;
  other_core_s *= factor;
  return *this;
}

Goodput job_goodput(std::span<const Attempt> attempts, TimePoint now) {
  return goodput_in(attempts, now, TimePoint::min(), TimePoint::max());
}

Goodput job_goodput_in(std::span<const Attempt> attempts, TimePoint from, TimePoint to) {
  return goodput_in(attempts, to, from, to);
}

namespace {

// Under this, an attempt is mostly its own start-up: its share of kept steps says nothing about it.
constexpr double kJudgedFromCoreS = 1.0;

// Time ran, but no step of it was reported: there is nothing to judge it by.
bool no_progress_reported(const Goodput& g) {
  return g.unmeasured_core_s > 0 && g.productive_core_s + g.redone_core_s == 0;
}

// A share of the measured core-time, or null with why when there is none to judge: no core-time
// (pending, cancelled before it ran), no progress reported, or too little.
Json judged_ratio(const Goodput& g) {
  return g.measured_core_s() >= kJudgedFromCoreS && !no_progress_reported(g) ? Json(g.ratio()) : Json(nullptr);
}

// Rounding leaves residues such as 8.5e-14 core-s where nothing was lost.
double tidy(double core_s) { return std::abs(core_s) < 1e-6 ? 0.0 : core_s; }

}  // namespace

Json to_json(const Goodput& g) {
  Json j = {{"goodput", judged_ratio(g)},
            {"allocated_core_s", g.allocated_core_s},
            {"productive_core_s", g.productive_core_s},
            {"unmeasured_core_s", tidy(g.unmeasured_core_s)},
            {"lost_core_s",
             {{"preflight", g.preflight_core_s},
              {"restart", g.restart_core_s},
              {"checkpoint", g.checkpoint_core_s},
              {"redone", g.redone_core_s},
              {"stalled", g.stalled_core_s},
              {"other", tidy(g.other_core_s)}}}};
  if (g.allocated_core_s <= 0) {
    j["goodput_note"] = "n/a: no core-time allocated yet";
  } else if (no_progress_reported(g)) {
    j["goodput_note"] =
        "n/a: no progress reported (write steps to TRAINYARD_PROGRESS_FILE to tell kept work from lost)";
  } else if (g.measured_core_s() < kJudgedFromCoreS) {
    j["goodput_note"] = "n/a: too short to judge (under 1 core-s, mostly start-up)";
  }
  return j;
}

}  // namespace trainyard::daemon
