#pragma once
// Fair-share arithmetic (Slurm's classic factor), kept apart from the scheduler's bookkeeping so
// that it can be checked by itself.
//
// Usage is core-seconds, decayed exponentially: a core-second charged one half-life ago counts
// half. A share holding `cores` for `elapsed` accrues the integral of the decayed charge, so the
// result does not depend on how often it is advanced (a pass every second or once an hour agree).
//
// The factor F = 2^(-U/S), U = the share's usage over everyone's usage, S = its weight over the
// weights of the shares with work. Because U and S have common denominators, ordering shares by F
// is ordering them by usage / weight; the scheduler sorts on that ratio and only computes F to
// show it.
#include "proto/time.h"

namespace trainyard::scheduler {

// The factor by which usage shrinks over `elapsed`.
double decay_factor(Millis elapsed, Millis half_life);

// `usage` as of `elapsed` later, with `cores` held throughout that time.
double decayed_usage(double usage, int cores, Millis elapsed, Millis half_life);

// F = 2^(-U/S); 1 when nobody has used anything.
double fair_share_factor(double usage, double total_usage, double weight, double active_weight);

}  // namespace trainyard::scheduler
