#include <gtest/gtest.h>

#include "proto/errors.h"
#include "proto/faults.h"

namespace trainyard::inline proto {
namespace {

std::string fault_rejected_field(const std::string& spec) {
  FaultPlan plan;
  try {
    apply_fault_spec(plan, spec, 32);
  } catch (const InvalidInput& e) {
    return e.field();
  }
  return "<accepted>";
}

TEST(FaultSpec, SetsAndClearsCoreFaults) {
  FaultPlan plan;
  apply_fault_spec(plan, "core:3=corrupt", 32);
  apply_fault_spec(plan, "core:31=hang", 32);
  apply_fault_spec(plan, "core:0=crash", 32);
  EXPECT_EQ(plan.cores, (std::map<int, CoreFault>{{0, CoreFault::crash}, {3, CoreFault::corrupt}, {31, CoreFault::hang}}));
  apply_fault_spec(plan, "core:3=none", 32);
  EXPECT_EQ(plan.cores.count(3), 0u);
}

TEST(FaultSpec, SlowCoresAndASlowNodeMultiplyAndNoneClearsThem) {
  FaultPlan plan;
  EXPECT_EQ(slowdown_of(plan, 0), 1.0);
  apply_fault_spec(plan, "core:1=slow:2", 32);
  apply_fault_spec(plan, "core:1=corrupt", 32);  // a slow core may also be corrupt
  EXPECT_EQ(slowdown_of(plan, 1), 2.0);
  EXPECT_EQ(slowdown_of(plan, 0), 1.0);
  apply_fault_spec(plan, "node=slow:1.5", 32);
  EXPECT_EQ(slowdown_of(plan, 1), 3.0);
  EXPECT_EQ(slowdown_of(plan, 0), 1.5);
  apply_fault_spec(plan, "core:1=none", 32);
  EXPECT_EQ(slowdown_of(plan, 1), 1.5);
  EXPECT_TRUE(plan.cores.empty());
  apply_fault_spec(plan, "node=none", 32);
  EXPECT_EQ(plan, FaultPlan{});
}

TEST(FaultSpec, ParsesLinkRatesWithDecimalSuffixes) {
  FaultPlan plan;
  apply_fault_spec(plan, "link=throttle:50MB", 32);
  EXPECT_EQ(plan.link.throttle_bytes_per_s, 50e6);
  apply_fault_spec(plan, "link=throttle:1.5G", 32);
  EXPECT_EQ(plan.link.throttle_bytes_per_s, 1.5e9);
  apply_fault_spec(plan, "link=throttle:800", 32);
  EXPECT_EQ(plan.link.throttle_bytes_per_s, 800.0);
  apply_fault_spec(plan, "link=throttle:64KB", 32);
  EXPECT_EQ(plan.link.throttle_bytes_per_s, 64e3);
  apply_fault_spec(plan, "link=drop", 32);
  EXPECT_TRUE(plan.link.drop);
  apply_fault_spec(plan, "link=none", 32);
  EXPECT_EQ(plan.link, LinkFault{});
}

TEST(FaultSpec, RejectsMalformedItemsNamingTheFaultField) {
  for (const char* spec : {"", "core:3", "core:32=hang", "core:-1=hang", "core:x=hang", "core:3=melt",
                           "link=throttle:", "link=throttle:0", "link=throttle:fastMB", "link=throttle:-5M",
                           "link=cut", "disk=drop", "core:1 =hang", "core:1=slow:1", "core:1=slow:0.5",
                           "core:1=slow:", "core:1=slow:101", "core:1=slow:nan", "node=slow:inf", "node=hang",
                           "node=slow:2x"}) {
    EXPECT_EQ(fault_rejected_field(spec), "fault") << spec;
  }
}

TEST(FaultSpec, ListingRebuildsThePlan) {
  FaultPlan plan;
  for (const char* spec : {"core:7=hang", "core:2=corrupt", "link=throttle:2.5M", "link=drop", "core:4=slow:2.5",
                           "node=slow:3"}) {
    apply_fault_spec(plan, spec, 8);
  }
  const auto specs = fault_specs(plan);
  EXPECT_EQ(specs, (std::vector<std::string>{"core:2=corrupt", "core:7=hang", "core:4=slow:2.5", "node=slow:3",
                                             "link=throttle:2.5MB", "link=drop"}));
  FaultPlan rebuilt;
  for (const auto& spec : specs) apply_fault_spec(rebuilt, spec, 8);
  EXPECT_EQ(rebuilt, plan);
  EXPECT_TRUE(fault_specs(FaultPlan{}).empty());
}

}  // namespace
}  // namespace trainyard::inline proto
