#pragma once
// Goodput (DESIGN.md "Liveness, stuck jobs, canaries, goodput"): the share of allocated core-time
// that produced training steps that were kept, and where the rest went. Pure: attempts in, figures
// out; the time of evaluation is passed in for attempts still running.
//
// Design note. An attempt holds `nodes x cores_per_node` cores from its creation to its end. Its
// steps ran between its start and its last progress, at an even pace (the daemon sees steps, not
// step times). The steps it completed past the checkpoint the next attempt resumed from were done
// again: lost. The rest of its time is lost to its cause:
// - start: from creation to the first step (pre-flight, launch, loading the checkpoint);
// - stalled: from the last step to the end of an attempt that failed (a hang, or the time a
//   failure took to be noticed and the gang stopped);
// - redone: steps a later attempt computed again.
// Checkpoint writes are asynchronous in the kernel: their cost is inside the step time, not
// separated. Jobs that report no steps (command jobs without a progress file) count their running
// time as productive: there is nothing to tell kept work from lost.
#include <cstdint>
#include <optional>
#include <span>

#include "proto/job.h"

namespace trainyard {

struct Goodput {
  double allocated_core_s = 0;
  double productive_core_s = 0;
  double start_core_s = 0;
  double stalled_core_s = 0;
  double redone_core_s = 0;
  double other_core_s = 0;  // what is left (e.g. a cancelled attempt's time, rounding)
  double ratio() const { return allocated_core_s > 0 ? productive_core_s / allocated_core_s : 1.0; }
  Goodput& operator+=(const Goodput& o);
};

// The step a checkpoint path names ("/.../step-0000000040" -> 40); nullopt if none.
std::optional<std::int64_t> checkpoint_step(const std::string& path);

// `attempts` of one job in creation order; `cores_per_node` of each attempt as recorded.
Goodput job_goodput(std::span<const Attempt> attempts, TimePoint now);

Json to_json(const Goodput& g);

}  // namespace trainyard
