#pragma once
// Per-step training metrics, as the kernel reports them (docs/DESIGN.md "The simulated node"):
// the agent batches them into `metrics` messages, the daemon stores them, the API serves them.
//
// Non-finite values are data here, not errors: the step whose loss went NaN is the one a user most
// wants to see. JSON has no NaN or Inf, so they travel as null and come back as NaN (as does a
// value left out).
#include <cstdint>
#include <optional>
#include <string>

#include "proto/job.h"
#include "proto/json_reader.h"

namespace trainyard::inline proto {

struct StepMetric {
  std::int64_t step = 0;  // 1-based, absolute (a resumed attempt starts past its checkpoint)
  double loss = 0;
  double grad_norm = 0;
  double param_norm = 0;
  double lr = 0;
  double samples_per_s = 0;
  bool spike = false;                                  // this step started a grad-norm spike
  std::optional<std::int64_t> spike_steps_to_return;  // this step ended a spike after that many steps
};

// One stored row: whose step it was.
struct MetricRecord {
  JobId job_id = 0;
  AttemptId attempt_id = 0;
  StepMetric metric;
};

Json to_json(const StepMetric& m);
// Strict: throws InvalidInput naming `path`.field.
StepMetric parse_step_metric(const Json& j, const std::string& path);

}  // namespace trainyard::proto
