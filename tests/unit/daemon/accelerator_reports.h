// Health reports as a node's agent sends them: an accelerator suite of one core and one GEMM check,
// and a rank's part of a collective suite.
#pragma once

#include <string>

#include "healthcheck/health_json.h"
#include "proto/collective_bandwidth.h"
#include "proto/json_reader.h"

namespace trainyard::daemon::testing {

inline Json one_gemm_report(healthcheck::CheckStatus status, double error, const std::string& detail) {
  healthcheck::AcceleratorReport report;
  report.cores.push_back(healthcheck::CoreResult{
      0, {healthcheck::CheckResult{healthcheck::AcceleratorTest::gemm, status, error, 1e-5, 1, detail}}});
  return healthcheck::to_json(report);
}

inline Json passing_report() { return one_gemm_report(healthcheck::CheckStatus::passed, 1e-7, ""); }

inline Json wrong_gemm_report() {
  return one_gemm_report(healthcheck::CheckStatus::failed, 2.5, "core 0: GEMM off by 2.5");
}

// A rank of a passing collective suite: every collective exact, at the same bandwidth on every
// rank, so no rank looks slower than the others.
inline Json passing_collective(int rank, int world) {
  healthcheck::RankCollectiveResult result;
  result.rank = rank;
  result.world_size = world;
  constexpr double kBytes = 1 << 20;
  constexpr double kSeconds = 0.001;
  for (auto kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    result.collectives.push_back(healthcheck::CollectiveMeasurement{
        kind, true, static_cast<std::size_t>(kBytes), kSeconds, busbw(kind, world, kBytes, kSeconds), ""});
  }
  return healthcheck::to_json(result);
}

inline Json hung_gemm_report() {
  return one_gemm_report(healthcheck::CheckStatus::timed_out, 0,
                         "core 0: GEMM did not finish within its 2000 ms budget");
}

}  // namespace trainyard::daemon::testing
