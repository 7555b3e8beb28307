#pragma once
// Canaries (docs/DESIGN.md "Canaries"): a small multi-node simulated job
// (training steps over real collectives) that the daemon itself submits on a schedule, in the
// system share (which the scheduler serves first), as the user "system". A canary that fails is a
// system problem by definition: the job is known good, so the cluster is not.
#include "proto/job.h"

namespace trainyard::daemon {

inline constexpr const char* kCanaryUser = "system";
inline constexpr const char* kCanaryShare = "system";

// The canary's spec: `nodes` nodes, a few hundred milliseconds of training with its all-reduces,
// one attempt (a retry would hide the failure it is there to show), and a short stuck limit.
JobSpec canary_spec(int nodes);

}  // namespace trainyard::daemon
