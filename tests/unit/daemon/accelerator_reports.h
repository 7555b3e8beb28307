// Accelerator reports as a node's agent sends them: one core, one GEMM check.
#pragma once

#include <string>

#include "healthcheck/health_json.h"
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

inline Json hung_gemm_report() {
  return one_gemm_report(healthcheck::CheckStatus::timed_out, 0,
                         "core 0: GEMM did not finish within its 2000 ms budget");
}

}  // namespace trainyard::daemon::testing
