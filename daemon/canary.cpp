#include "daemon/canary.h"

namespace trainyard::daemon {

JobSpec canary_spec(int nodes) {
  JobSpec spec;
  spec.name = "canary";
  spec.share = kCanaryShare;
  spec.nodes = nodes;
  spec.cores_per_node = 1;
  spec.kind = JobKind::simulated;
  spec.workload.steps = 20;
  spec.workload.global_batch = 64;
  spec.workload.checkpoint_every = 0;
  spec.retry.attempts = 1;
  spec.timeout_s = 600;
  spec.stuck_after_s = 60;
  spec.preflight = false;  // the canary tests the collectives itself
  spec.labels = {{"trainyard.canary", "true"}};
  return spec;
}

}  // namespace trainyard::daemon
