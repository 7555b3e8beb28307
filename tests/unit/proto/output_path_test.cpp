// sbatch's -o/-e patterns as Trainyard fills them in (proto/output_path.h).
#include "proto/output_path.h"

#include <gtest/gtest.h>

#include "proto/errors.h"

namespace trainyard {
namespace {

OutputPathFacts facts() {
  OutputPathFacts f;
  f.job_id = 42;
  f.job_name = "train";
  f.user = "alice";
  f.node = "trn-3";
  f.node_rank = 2;
  return f;
}

TEST(OutputPath, EveryPatternIsFilledInAndTheRestKeptAsWritten) {
  EXPECT_EQ(expand_output_path("slurm-%j.out", facts()), "slurm-42.out");
  EXPECT_EQ(expand_output_path("logs/%x-%u-%N-%n.txt", facts()), "logs/train-alice-trn-3-2.txt");
  EXPECT_EQ(expand_output_path("100%%-%j", facts()), "100%-42");
  EXPECT_EQ(expand_output_path("/abs/path.log", facts()), "/abs/path.log");
}

TEST(OutputPath, AnArraysIdAndTaskStandForAJobsOwnIdAndZeroOutsideOne) {
  EXPECT_EQ(expand_output_path("%A_%a.out", facts()), "42_0.out");
  OutputPathFacts task = facts();
  task.array_job = 40;
  task.array_task = 2;
  EXPECT_EQ(expand_output_path("%A_%a.out", task), "40_2.out");
}

TEST(OutputPath, OnlyAPatternNamingTheNodeIsWrittenByEveryNode) {
  EXPECT_FALSE(output_per_node("slurm-%j.out"));
  EXPECT_TRUE(output_per_node("out-%N.txt"));
  EXPECT_TRUE(output_per_node("out-%n.txt"));
  EXPECT_FALSE(output_per_node("100%%n")) << "%% is a percent sign, not the start of %n";
}

TEST(OutputPath, PatternsItDoesNotFillInAreRefusedByName) {
  EXPECT_NO_THROW(check_output_pattern("f", "a-%j-%x-%u-%N-%n-%A-%a-%%"));
  try {
    check_output_pattern("command.output", "out-%t.txt");
    FAIL() << "accepted %t";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "command.output");
    EXPECT_NE(std::string(e.what()).find("%t"), std::string::npos) << e.what();
  }
  EXPECT_THROW(check_output_pattern("f", "out%"), InvalidInput);
  EXPECT_THROW(check_output_pattern("f", ""), InvalidInput);
  EXPECT_THROW(check_output_pattern("f", std::string("a\0b", 3)), InvalidInput);
}

}  // namespace
}  // namespace trainyard
