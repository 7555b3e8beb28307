// Registration gating and timeouts of health checks, with fake agents and fake time.
#include <gtest/gtest.h>

#include "healthcheck/health_json.h"
#include "tests/unit/daemon/harness.h"

namespace trainyard::testing {
namespace {

JobManagerConfig gated_config() {
  JobManagerConfig c = test_config();
  c.registration_checks = true;
  return c;
}

Json passing_report() {
  health::AcceleratorReport report;
  report.cores.push_back(health::CoreResult{0, {health::CheckResult{health::AcceleratorTest::gemm, health::CheckStatus::passed, 1e-7, 1e-5, 1, ""}}});
  return health::to_json(report);
}

Json corrupt_report() {
  health::AcceleratorReport report;
  report.cores.push_back(health::CoreResult{
      3, {health::CheckResult{health::AcceleratorTest::gemm, health::CheckStatus::failed, 2.5, 1e-5, 1, "core 3: GEMM off by 2.5"}}});
  return health::to_json(report);
}

NodeState state_of(Cluster& c, const std::string& node) { return c.jobs.node(node)->node.state; }

TEST(HealthGating, ANewNodeTakesNoWorkUntilItPassesItsRegistrationCheck) {
  Cluster c(gated_config());
  auto agent = c.connect("n1");
  EXPECT_EQ(state_of(c, "n1"), NodeState::suspect);
  const auto checks = agent->all<HealthCheckMsg>();
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].suite, HealthSuite::accelerator);
  c.submit(command_spec(1));
  EXPECT_TRUE(c.launches().empty()) << "work was placed on an untested node";

  c.send("n1", HealthResultMsg{checks[0].task_id, passing_report(), ""});
  EXPECT_EQ(state_of(c, "n1"), NodeState::healthy);
  EXPECT_EQ(c.jobs.node("n1")->node.last_check_verdict, "HEALTHY");
  EXPECT_EQ(c.launches().size(), 1u) << "the pending job did not start once the node passed";
}

TEST(HealthGating, AFailedCoreMakesTheNodeUnhealthyWithTheCoreNamed) {
  Cluster c(gated_config());
  auto agent = c.connect("n1");
  c.send("n1", HealthResultMsg{agent->all<HealthCheckMsg>()[0].task_id, corrupt_report(), ""});
  const Node node = c.jobs.node("n1")->node;
  EXPECT_EQ(node.state, NodeState::unhealthy);
  EXPECT_NE(node.state_reason.find("core 3"), std::string::npos) << node.state_reason;
}

TEST(HealthGating, AnAgentThatDoesNotAnswerIsUnhealthyAfterTheTaskTimeout) {
  Cluster c(gated_config());
  c.connect("n1");
  c.advance(Millis(9000));
  EXPECT_EQ(state_of(c, "n1"), NodeState::suspect);
  c.heartbeat("n1");
  c.advance(Millis(1500));
  const Node node = c.jobs.node("n1")->node;
  EXPECT_EQ(node.state, NodeState::unhealthy);
  EXPECT_NE(node.state_reason.find("no health result"), std::string::npos) << node.state_reason;
}

TEST(HealthGating, AResultForAnotherNodesTaskIsIgnored) {
  Cluster c(gated_config());
  auto a = c.connect("n1");
  c.connect("n2");
  c.send("n2", HealthResultMsg{a->all<HealthCheckMsg>()[0].task_id, corrupt_report(), ""});
  EXPECT_EQ(state_of(c, "n1"), NodeState::suspect);
}

}  // namespace
}  // namespace trainyard::testing
