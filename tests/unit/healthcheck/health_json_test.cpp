#include "healthcheck/health_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>

#include "tests/unit/healthcheck/run_builder.h"

namespace trainyard::healthcheck {
namespace {

using testing::kMB;
using testing::RankFigures;
using testing::run_of;

// Serialises through text, as the wire and the store do.
Json through_text(const Json& j) { return parse_json_text(j.dump()); }

AcceleratorReport sample_report() {
  return {{{0,
            {{AcceleratorTest::gemm, CheckStatus::passed, 3e-7, 6e-5, 1.5, ""},
             {AcceleratorTest::stochastic_rounding, CheckStatus::passed, 2e-6, 1.3e-4, 0.7, ""},
             {AcceleratorTest::memory, CheckStatus::passed, 0, 0, 2.25, ""}},
            0.31},
           {3,
            {{AcceleratorTest::gemm, CheckStatus::timed_out, 2001, 2000, 2001, "core 3: GEMM timed out after 2001 ms (budget 2000 ms)"},
             {AcceleratorTest::stochastic_rounding, CheckStatus::skipped, 0, 0, 0, ""},
             {AcceleratorTest::memory, CheckStatus::skipped, 0, 0, 0, ""}}}},
          2050.5};
}

CollectiveRun sample_run() {
  std::vector<RankFigures> figures(3, RankFigures{80 * kMB});
  figures[1].wrong = "all_reduce element 5 is 9, want 8";
  CollectiveRun run = run_of({"node-a", "node-b", "node-c"}, figures);
  run.ranks[2].error = "reduce_scatter: rank 0 (127.0.0.1:4711) closed the connection";
  run.ranks[2].failed_peer = 0;
  run.ranks[2].refused_connections = 280;
  return run;
}

TEST(HealthJsonTest, EveryTypeSurvivesARoundTrip) {
  EXPECT_EQ(accelerator_report_from_json(through_text(to_json(sample_report()))), sample_report());
  EXPECT_EQ(collective_run_from_json(through_text(to_json(sample_run()))), sample_run());
  const CollectiveVerdict verdict{{{"node-a", NodeState::healthy, "ok"}, {"node-b", NodeState::suspect, "slow"}}, true};
  EXPECT_EQ(collective_verdict_from_json(through_text(to_json(verdict))), verdict);
  const CollectiveVerdict interfered{{}, false, "failed while rank 1 (b) refused 280 data-plane connections"};
  EXPECT_EQ(collective_verdict_from_json(through_text(to_json(interfered))), interfered);
  const LocalisationPlan plan = plan_localisation({"a", "b", "c", "d"});
  EXPECT_EQ(localisation_plan_from_json(through_text(to_json(plan))), plan);
  AcceleratorSuiteOptions accelerator;
  accelerator.budget = std::chrono::milliseconds(1500);
  accelerator.parallel_cores = 4;
  accelerator.timing_repeats = 3;
  EXPECT_EQ(accelerator_suite_options_from_json(through_text(to_json(accelerator))), accelerator);
  const CollectiveSuiteOptions collective{4096, 5};
  EXPECT_EQ(collective_suite_options_from_json(through_text(to_json(collective))), collective);
  const CollectivePolicy policy{0.6, 25 * kMB};
  EXPECT_EQ(collective_policy_from_json(through_text(to_json(policy))), policy);
  EXPECT_EQ(collective_policy_from_json(through_text(to_json(CollectivePolicy{}))), CollectivePolicy{});
}

TEST(HealthJsonTest, ACoreStoredBeforeItsGemmWasTimedReadsAsUntimed) {
  Json stored = to_json(sample_report());
  stored["cores"][0].erase("gemm_ms");
  EXPECT_EQ(accelerator_report_from_json(through_text(stored)).cores[0].gemm_ms, 0.0);
}

TEST(HealthJsonTest, AnInfiniteErrorIsWrittenAsTheLargestFiniteNumber) {
  AcceleratorReport report = sample_report();
  report.cores[0].checks[0].measured = INFINITY;
  const AcceleratorReport back = accelerator_report_from_json(through_text(to_json(report)));
  EXPECT_EQ(back.cores[0].checks[0].measured, DBL_MAX);
}

// Applies `edit` to a valid document and returns the field the reader names.
std::string rejected_field(Json j, const std::function<void(Json&)>& edit,
                           const std::function<void(const Json&)>& read) {
  edit(j);
  try {
    read(j);
  } catch (const InvalidInput& e) {
    return e.field();
  }
  return "<accepted>";
}

TEST(HealthJsonTest, MalformedReportsNameTheField) {
  const auto report = [](const Json& j) { accelerator_report_from_json(j); };
  const Json valid = to_json(sample_report());
  EXPECT_EQ(rejected_field(valid, [](Json&) {}, report), "<accepted>");
  EXPECT_EQ(rejected_field(valid, [](Json& j) { j["cores"][1]["checks"][0]["status"] = "fine"; }, report),
            "cores[1].checks[0].status");
  EXPECT_EQ(rejected_field(valid, [](Json& j) { j["cores"][0]["checks"][2]["measured"] = "0"; }, report),
            "cores[0].checks[2].measured");
  EXPECT_EQ(rejected_field(valid, [](Json& j) { j["cores"][0]["core"] = -1; }, report), "cores[0].core");
  EXPECT_EQ(rejected_field(valid, [](Json& j) { j["cores"][0]["gemm_ms"] = -0.5; }, report), "cores[0].gemm_ms");
  EXPECT_EQ(rejected_field(valid, [](Json& j) { j["cores"][0]["checks"][1]["extra"] = 1; }, report),
            "cores[0].checks[1].extra");
  EXPECT_EQ(rejected_field(valid, [](Json& j) { j.erase("duration_ms"); }, report), "duration_ms");
  EXPECT_EQ(rejected_field(valid, [](Json& j) { j["cores"] = Json::object(); }, report), "cores");
}

TEST(HealthJsonTest, ACollectiveRunMustBeConsistent) {
  const auto run = [](const Json& j) { collective_run_from_json(j, "result"); };
  const Json valid = to_json(sample_run());
  EXPECT_EQ(rejected_field(valid, [](Json&) {}, run), "<accepted>");
  EXPECT_EQ(rejected_field(valid, [](Json& j) { j["ranks"].erase(2); }, run), "result.ranks");
  EXPECT_EQ(rejected_field(valid, [](Json& j) { j["ranks"][1]["rank"] = 2; }, run), "result.ranks[1].rank");
  EXPECT_EQ(rejected_field(valid, [](Json& j) { j["ranks"][0]["world_size"] = 4; }, run), "result.ranks[0].world_size");
  EXPECT_EQ(rejected_field(valid, [](Json& j) { j["ranks"][2]["failed_peer"] = 3; }, run), "result.ranks[2].failed_peer");
  EXPECT_EQ(rejected_field(
                valid, [](Json& j) { j["ranks"][2]["refused_connections"] = -1; }, run),
            "result.ranks[2].refused_connections");
  EXPECT_EQ(rejected_field(valid, [](Json& j) { j["ranks"][0]["collectives"][1]["kind"] = "broadcast"; }, run),
            "result.ranks[0].collectives[1].kind");
  EXPECT_EQ(rejected_field(valid, [](Json& j) { j["ranks"][0]["collectives"][0]["busbw"] = -1; }, run),
            "result.ranks[0].collectives[0].busbw");
  EXPECT_EQ(rejected_field(valid, [](Json& j) { j["nodes"][1] = "bad name!"; }, run), "result.nodes[1]");
  EXPECT_EQ(rejected_field(valid, [](Json& j) { j["nodes"] = Json::array(); }, run), "result.nodes");
}

TEST(HealthJsonTest, MalformedVerdictsPlansAndOptionsNameTheField) {
  const auto verdict = [](const Json& j) { collective_verdict_from_json(j); };
  const Json valid_verdict = to_json(CollectiveVerdict{{{"node-a", NodeState::healthy, "ok"}}, false});
  EXPECT_EQ(rejected_field(valid_verdict, [](Json& j) { j["nodes"][0]["state"] = "DRAINED"; }, verdict), "nodes[0].state");

  const auto plan = [](const Json& j) { localisation_plan_from_json(j); };
  const Json valid_plan = to_json(plan_localisation({"a", "b", "c"}));
  EXPECT_EQ(rejected_field(valid_plan, [](Json& j) { j["rounds"][1][0] = Json::array(); }, plan), "rounds[1][0]");
  EXPECT_EQ(rejected_field(valid_plan, [](Json& j) { j["rounds"][0][0][1] = 7; }, plan), "rounds[0][0][1]");

  const auto accelerator = [](const Json& j) { accelerator_suite_options_from_json(j); };
  const Json valid_options = to_json(AcceleratorSuiteOptions{});
  EXPECT_EQ(rejected_field(valid_options, [](Json& j) { j["budget_ms"] = 0; }, accelerator), "budget_ms");
  EXPECT_EQ(rejected_field(valid_options, [](Json& j) { j["timing_repeats"] = 0; }, accelerator), "timing_repeats");
  EXPECT_EQ(rejected_field(valid_options, [](Json& j) { j["false_alarm_probability"] = 1; }, accelerator),
            "false_alarm_probability");

  const auto policy = [](const Json& j) { collective_policy_from_json(j); };
  EXPECT_EQ(rejected_field(to_json(CollectivePolicy{}), [](Json& j) { j["suspect_fraction"] = 1.5; }, policy),
            "suspect_fraction");
  EXPECT_EQ(rejected_field(to_json(CollectiveSuiteOptions{}), [](Json& j) { j["iterations"] = 0; },
                           [](const Json& j) { collective_suite_options_from_json(j); }),
            "iterations");
}

}  // namespace
}  // namespace trainyard::healthcheck
