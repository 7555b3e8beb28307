#pragma once
// JSON codecs for everything the health checks exchange: suite options (daemon -> agent), results
// (agent -> daemon, stored, served by the REST API) and verdicts. Readers are strict
// (proto/json_reader.h): wrong types, out-of-range values and unknown fields throw
// trainyard::InvalidInput naming the dotted field, e.g. "cores[3].checks[0].status".
// `path` is where the object sits in the enclosing document ("" for the root).
// Infinite figures (a NaN GEMM element's error) are written as the largest finite double.
#include <string>

#include "healthcheck/localisation.h"
#include "healthcheck/results.h"
#include "healthcheck/suite_options.h"
#include "healthcheck/verdict.h"
#include "proto/json_reader.h"

namespace trainyard::healthcheck {

Json to_json(const CheckResult& c);
Json to_json(const CoreResult& c);
Json to_json(const AcceleratorReport& r);
Json to_json(const CollectiveMeasurement& m);
Json to_json(const RankCollectiveResult& r);
Json to_json(const CollectiveRun& r);
Json to_json(const NodeVerdict& v);
Json to_json(const CollectiveVerdict& v);
Json to_json(const LocalisationPlan& p);
Json to_json(const LocalisationReport& report);
Json to_json(const AcceleratorSuiteOptions& o);
Json to_json(const CollectiveSuiteOptions& o);
Json to_json(const CollectivePolicy& p);

CheckResult check_result_from_json(const Json& j, const std::string& path = "");
CoreResult core_result_from_json(const Json& j, const std::string& path = "");
AcceleratorReport accelerator_report_from_json(const Json& j, const std::string& path = "");
CollectiveMeasurement collective_measurement_from_json(const Json& j, const std::string& path = "");
RankCollectiveResult rank_collective_result_from_json(const Json& j, const std::string& path = "");
// Also checks that the run is consistent: one result per node, rank r at index r, every world
// size equal to the number of nodes.
CollectiveRun collective_run_from_json(const Json& j, const std::string& path = "");
NodeVerdict node_verdict_from_json(const Json& j, const std::string& path = "");
CollectiveVerdict collective_verdict_from_json(const Json& j, const std::string& path = "");
LocalisationPlan localisation_plan_from_json(const Json& j, const std::string& path = "");
AcceleratorSuiteOptions accelerator_suite_options_from_json(const Json& j, const std::string& path = "");
CollectiveSuiteOptions collective_suite_options_from_json(const Json& j, const std::string& path = "");
CollectivePolicy collective_policy_from_json(const Json& j, const std::string& path = "");

}  // namespace trainyard::healthcheck
