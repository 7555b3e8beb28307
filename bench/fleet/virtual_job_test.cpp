// The fleet simulator's virtual jobs: what their commands mean and what they report over time.
#include "bench/fleet/virtual_job.h"

#include <gtest/gtest.h>

#include "proto/errors.h"

namespace trainyard::fleet {
namespace {

TEST(VirtualJob, ASucceedingJobAdvancesAStepPerPeriodAndExitsZeroOnTime) {
  const VirtualJob job = VirtualJob::from_argv(VirtualJob::argv(VirtualJob::Outcome::succeed, Millis(1000)));
  EXPECT_EQ(job.step_at(Millis(0)), 0);
  EXPECT_FALSE(job.progress_at(Millis(50)).has_value()) << "no step yet";
  EXPECT_EQ(job.step_at(Millis(250)), 2);
  EXPECT_EQ(job.progress_at(Millis(250)), Millis(200));
  EXPECT_EQ(job.exits_after(), Millis(1000));
  const AttemptExitedMsg exit = job.exit_report(7);
  EXPECT_EQ(exit.attempt_id, 7);
  EXPECT_EQ(exit.exit_code, 0);
  EXPECT_EQ(exit.steps, 10);
  EXPECT_FALSE(exit.signal.has_value());
}

TEST(VirtualJob, AFailingJobExitsOneWithALogTail) {
  const VirtualJob job = VirtualJob::from_argv({"virtual", "fail", "300"});
  const AttemptExitedMsg exit = job.exit_report(3);
  EXPECT_EQ(exit.exit_code, 1);
  EXPECT_EQ(exit.steps, 3);
  EXPECT_FALSE(exit.log_tail.empty());
}

TEST(VirtualJob, AHungJobStopsAdvancingAndExitsOnlyWhenKilled) {
  const VirtualJob job = VirtualJob::from_argv({"virtual", "hang", "500"});
  EXPECT_EQ(job.step_at(Millis(400)), 4);
  EXPECT_EQ(job.step_at(Millis(60'000)), 5) << "stays at the step it hung at";
  EXPECT_EQ(job.progress_at(Millis(60'000)), Millis(500));
  EXPECT_FALSE(job.exits_after().has_value());
  const AttemptExitedMsg exit = job.killed_report(9, Millis(60'000), "stuck");
  EXPECT_EQ(exit.signal, 15);
  EXPECT_EQ(exit.steps, 5);
  EXPECT_NE(exit.reason.find("stuck"), std::string::npos);
}

TEST(VirtualJob, ACommandThatIsNotAVirtualJobIsRefusedNamingTheField) {
  const auto field_of = [](const std::vector<std::string>& argv) {
    try {
      VirtualJob::from_argv(argv);
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return std::string("accepted");
  };
  EXPECT_EQ(field_of({"/bin/true"}), "command.argv");
  EXPECT_EQ(field_of({"virtual", "explode", "10"}), "command.argv[1]");
  EXPECT_EQ(field_of({"virtual", "succeed", "soon"}), "command.argv[2]");
  EXPECT_EQ(field_of({"virtual", "succeed", "-1"}), "command.argv[2]");
}

}  // namespace
}  // namespace trainyard::fleet
