#include "agent/accelerator_suite.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "healthcheck/verdict.h"

namespace trainyard::healthcheck {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// What a hung core costs in the tests with a hang: long enough that a healthy core's check finishes
// inside it on a loaded 2-core CI machine under sanitizers (a memory check took ~700 ms there).
constexpr std::chrono::milliseconds kBudget{3000};
// Less than one budget, so a suite that waited for hung cores one after another would fail.
constexpr double kSlackMs = 2500;
// With no hang, the budget only decides whether a slow machine fails healthy cores: none of them.
constexpr std::chrono::milliseconds kNoHangBudget{60'000};

AcceleratorSuiteOptions options(std::chrono::milliseconds budget = kBudget) {
  AcceleratorSuiteOptions o;
  o.budget = budget;
  return o;
}

std::vector<CheckStatus> statuses(const CoreResult& core) {
  std::vector<CheckStatus> out;
  for (const CheckResult& c : core.checks) out.push_back(c.status);
  return out;
}

TEST(AcceleratorSuiteTest, EveryCoreOfAHealthyThirtyTwoCoreDevicePasses) {
  neuron::NeuronDevice device;
  const AcceleratorReport report = agent::run_accelerator_suite(device, options(kNoHangBudget));
  ASSERT_EQ(report.cores.size(), 32u);
  for (std::size_t i = 0; i < report.cores.size(); ++i) {
    const CoreResult& core = report.cores[i];
    EXPECT_EQ(core.core, static_cast<int>(i));
    EXPECT_TRUE(core.passed()) << "core " << i;
    ASSERT_EQ(core.checks.size(), 3u);
    EXPECT_EQ(core.checks[0].test, AcceleratorTest::gemm);
    EXPECT_EQ(core.checks[1].test, AcceleratorTest::stochastic_rounding);
    EXPECT_EQ(core.checks[2].test, AcceleratorTest::memory);
    EXPECT_GT(core.checks[0].measured, 0.0) << "measured values are reported, not just pass/fail";
    EXPECT_LE(core.checks[0].measured, core.checks[0].limit);
    EXPECT_LE(core.checks[1].measured, core.checks[1].limit);
    for (const CheckResult& check : core.checks) EXPECT_GT(check.duration_ms, 0.0);
  }
  EXPECT_GT(report.duration_ms, 0.0);
  EXPECT_EQ(judge_accelerator("node-a", report).state, NodeState::healthy);
}

TEST(AcceleratorSuiteTest, FaultedCoresAreNamedAndTheOthersPass) {
  neuron::NeuronDevice device(8);
  device.set_faults({{{3, CoreFault::corrupt}, {5, CoreFault::hang}, {6, CoreFault::crash}}, {}});
  const AcceleratorReport report = agent::run_accelerator_suite(device, options());
  ASSERT_EQ(report.cores.size(), 8u);
  for (int healthy : {0, 1, 2, 4, 7}) EXPECT_TRUE(report.cores[static_cast<std::size_t>(healthy)].passed()) << healthy;

  // Silent corruption is caught by every test, each naming the core.
  const CoreResult& corrupt = report.cores[3];
  EXPECT_THAT(statuses(corrupt), ::testing::ElementsAre(CheckStatus::failed, CheckStatus::failed, CheckStatus::failed));
  EXPECT_THAT(corrupt.checks[0].reason, StartsWith("core 3: GEMM element ["));
  EXPECT_GT(corrupt.checks[0].measured, corrupt.checks[0].limit);
  EXPECT_THAT(corrupt.checks[1].reason, StartsWith("core 3: stochastic rounding of element "));
  EXPECT_THAT(corrupt.checks[2].reason, StartsWith("core 3: memory pattern checkerboard word "));

  // The hang is a timeout after its budget, and the core gets no more work.
  const CoreResult& hung = report.cores[5];
  EXPECT_THAT(statuses(hung), ::testing::ElementsAre(CheckStatus::timed_out, CheckStatus::skipped, CheckStatus::skipped));
  EXPECT_GE(hung.checks[0].duration_ms, static_cast<double>(kBudget.count()));
  EXPECT_LT(hung.checks[0].duration_ms, kBudget.count() + kSlackMs);
  EXPECT_THAT(hung.checks[0].reason, StartsWith("core 5: GEMM timed out after "));
  EXPECT_THAT(hung.checks[0].reason, HasSubstr("(budget " + std::to_string(kBudget.count()) + " ms)"));

  const CoreResult& crashed = report.cores[6];
  EXPECT_THAT(statuses(crashed), ::testing::ElementsAre(CheckStatus::crashed, CheckStatus::skipped, CheckStatus::skipped));
  EXPECT_EQ(crashed.checks[0].reason, "core 6: crashed during GEMM (NeuronCore 6 crashed)");

  EXPECT_LT(report.duration_ms, kBudget.count() + kSlackMs) << "a hung core must not hold up the suite";

  const NodeVerdict verdict = judge_accelerator("node-b", report);
  EXPECT_EQ(verdict.state, NodeState::unhealthy);
  EXPECT_THAT(verdict.reason, StartsWith("3 of 8 cores failed: core 3: GEMM element"));
  EXPECT_THAT(verdict.reason, HasSubstr("; core 5: GEMM timed out after"));
  EXPECT_THAT(verdict.reason, HasSubstr("; core 6: crashed during GEMM"));
}

// A slow core computes right, so every test passes; its timed GEMMs show it. The fault makes each
// operation last 4x its own compute time, and the fastest of the repeats is compared, so the ratio
// stays near 4 however busy the host is.
TEST(AcceleratorSuiteTest, ASlowCorePassesItsTestsAndItsGemmTimeNamesIt) {
  neuron::NeuronDevice device(4);
  FaultPlan plan;
  plan.slow_cores[2] = 4;
  device.set_faults(plan);
  const AcceleratorReport report = agent::run_accelerator_suite(device, options(kNoHangBudget));
  ASSERT_EQ(report.cores.size(), 4u);
  for (const CoreResult& core : report.cores) {
    EXPECT_TRUE(core.passed()) << core.core;
    EXPECT_GT(core.gemm_ms, 0.0) << core.core;
  }
  const double others = std::max({report.cores[0].gemm_ms, report.cores[1].gemm_ms, report.cores[3].gemm_ms});
  EXPECT_GE(report.cores[2].gemm_ms, 2.0 * others);
  const NodeVerdict verdict = judge_accelerator("node-c", report);
  EXPECT_EQ(verdict.state, NodeState::suspect) << verdict.reason;
  EXPECT_THAT(verdict.reason, HasSubstr("core 2: GEMM in "));
  EXPECT_THAT(verdict.reason, HasSubstr("the median of the other cores"));
  EXPECT_THAT(verdict.reason, ::testing::Not(HasSubstr("core 0:")));
}

TEST(AcceleratorSuiteTest, TwoHungCoresCostOneBudgetWithTwoWorkers) {
  neuron::NeuronDevice device(4);
  device.set_faults({{{0, CoreFault::hang}, {1, CoreFault::hang}}, {}});
  AcceleratorSuiteOptions o = options();
  o.parallel_cores = 2;  // both workers start on a hung core; the healthy cores wait one budget
  const AcceleratorReport report = agent::run_accelerator_suite(device, o);
  EXPECT_EQ(report.cores[0].checks[0].status, CheckStatus::timed_out);
  EXPECT_EQ(report.cores[1].checks[0].status, CheckStatus::timed_out);
  EXPECT_TRUE(report.cores[2].passed());
  EXPECT_TRUE(report.cores[3].passed());
  EXPECT_LT(report.duration_ms, kBudget.count() + kSlackMs);
}

}  // namespace
}  // namespace trainyard::healthcheck
