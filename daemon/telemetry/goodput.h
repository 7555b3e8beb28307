#pragma once
// Goodput (docs/DESIGN.md "Goodput"): the share of allocated core-time
// that produced training steps that were kept, and where the rest went. Pure: attempts in, figures
// out; the time of evaluation is passed in for attempts still running.
//
// Design note. An attempt holds `nodes x cores_per_node` cores from its creation to its end. The
// daemon sees its steps, not each step's time, so steps are taken to run at an even pace between
// the first step and the last progress (the first step itself is one average step long). The time
// goes, in order, to:
// - preflight: from placement to launch (the pre-flight check; placement and the checkpoint claim
//   take milliseconds). An attempt that never launched spent all of its time here;
// - restart: from launch until the first step began (processes starting, peers connecting, the
//   checkpoint loading), for every start after the job's first: the first start of a job is the
//   price of running it at all, and counts as productive (a clean first attempt loses nothing);
// - checkpoint: how long checkpoint writes held up training, as the kernel measures it (writes are
//   asynchronous; only a hand-off that pushed a step past its pace, and the wait for the last write,
//   cost anything). Taken out of step time first, then out of the time after the last step;
// - redone: steps a later attempt computed again (past the checkpoint the next attempt that chose a
//   checkpoint or launched resumed from: one that never launched computed nothing);
// - stalled: from the last step to the end of an attempt that failed (a hang, or the time a failure
//   took to be noticed and the gang stopped);
// - productive: the rest of the step time, and the time after the last step of an attempt that
//   did not fail.
// - unmeasured: the time since launch of an attempt that reported no step (a command job without
//   a progress file): nothing tells kept work from lost, so it is neither. Goodput is the productive
//   share of the measured time (allocated less unmeasured), and none at all ("n/a: no progress
//   reported") when time was unmeasured and no step was ever reported.
// Command jobs do not report checkpoint time: theirs is inside their steps.
#include <cstdint>
#include <optional>
#include <span>

#include "proto/job.h"

namespace trainyard::daemon {

struct Goodput {
  double allocated_core_s = 0;
  double productive_core_s = 0;
  double preflight_core_s = 0;
  double restart_core_s = 0;
  double checkpoint_core_s = 0;
  double redone_core_s = 0;
  double stalled_core_s = 0;
  double unmeasured_core_s = 0;
  double other_core_s = 0;  // what is left (rounding; times reported out of order)
  double measured_core_s() const { return allocated_core_s - unmeasured_core_s; }
  double ratio() const { return measured_core_s() > 0 ? productive_core_s / measured_core_s() : 1.0; }
  Goodput& operator+=(const Goodput& o);
  Goodput& operator*=(double factor);
};

// `attempts` of one job in creation order; `cores_per_node` of each attempt as recorded.
Goodput job_goodput(std::span<const Attempt> attempts, TimePoint now);
// The same, only the core-seconds that fell in [from, to] (`to` is "now" for running attempts): each
// cause's time is spread evenly over the stretch of the attempt it was spent in, and the window takes
// its share of each stretch. Pass an attempt's successors too: what it kept depends on them.
Goodput job_goodput_in(std::span<const Attempt> attempts, TimePoint from, TimePoint to);

Json to_json(const Goodput& g);

}  // namespace trainyard::daemon
