#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "agent/progress_file.h"

namespace trainyard::agent {
namespace {

TEST(ProgressFile, AStepLineCarriesItsMetricsAndNullIsAMeasuredNaN) {
  ProgressUpdate update;
  ASSERT_TRUE(apply_progress_line(R"({"step":12,"loss":0.5,"lr":0.001,"samples_per_s":950,"phase":"forward"})", update));
  ASSERT_TRUE(apply_progress_line(R"({"step":13,"loss":null})", update));
  EXPECT_EQ(update.step, 13);
  EXPECT_EQ(update.phase, "forward");
  ASSERT_EQ(update.metrics.size(), 2u);
  EXPECT_EQ(update.metrics[0].step, 12);
  EXPECT_DOUBLE_EQ(update.metrics[0].loss, 0.5);
  EXPECT_DOUBLE_EQ(update.metrics[0].lr, 0.001);
  EXPECT_DOUBLE_EQ(update.metrics[0].samples_per_s, 950);
  EXPECT_TRUE(std::isnan(update.metrics[0].grad_norm)) << "not measured";
  EXPECT_TRUE(std::isnan(update.metrics[1].loss));
  ASSERT_TRUE(apply_progress_line(R"({"step":14})", update));
  EXPECT_EQ(update.metrics.size(), 2u) << "a step without metrics is progress only";
}

TEST(ProgressFile, CheckpointAndSavePhasesCountAsCheckpointTime) {
  ProgressUpdate update;
  ASSERT_TRUE(apply_progress_line(R"({"phase":"checkpoint"})", update));
  EXPECT_EQ(update.phase, "checkpoint");
  ASSERT_TRUE(apply_progress_line(R"({"phase":"","phase_ended":"checkpoint","seconds":2.5})", update));
  ASSERT_TRUE(apply_progress_line(R"({"phase":"","phase_ended":"eval","seconds":9})", update));
  ASSERT_TRUE(apply_progress_line(R"({"phase":"","phase_ended":"save-model","seconds":0.25})", update));
  EXPECT_EQ(update.phase, "");
  EXPECT_EQ(update.checkpoint_ms, 2750);
  ASSERT_TRUE(apply_progress_line(R"({"checkpoint_written":"/ck/step-0000000040","step":40})", update));
  ASSERT_EQ(update.checkpoints.size(), 1u);
  EXPECT_EQ(update.checkpoints[0].path, "/ck/step-0000000040");
  EXPECT_EQ(update.checkpoints[0].step, 40);
  EXPECT_FALSE(update.step) << "a checkpoint's step is not training progress";
}

TEST(ProgressFile, LinesThatAreNotProgressAreRefused) {
  ProgressUpdate update;
  for (const char* line : {"not json", "[1,2]", R"({"step":-1})", R"({"step":1.5})", R"({"step":"12"})",
                           R"({"step":1,"loss":"low"})", R"({"phase":7})", R"({"phase_ended":"checkpoint"})",
                           R"({"phase_ended":"checkpoint","seconds":-3})", R"({"checkpoint_written":"/x"})",
                           R"({"step":18446744073709551615})"}) {
    EXPECT_FALSE(apply_progress_line(line, update)) << line;
  }
  EXPECT_FALSE(apply_progress_line(std::string(kMaxLineBytes + 1, ' '), update));
}

TEST(ProgressFile, TheRewrittenStepFormatStillWorks) {
  const auto update = parse_step_file("412 all-reduce\n");
  ASSERT_TRUE(update);
  EXPECT_EQ(update->step, 412);
  EXPECT_EQ(update->phase, "all-reduce");
  EXPECT_FALSE(parse_step_file("all-reduce"));
}

class ProgressFileReads : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove(path_); }
  void append(const std::string& text) { std::ofstream(path_, std::ios::app) << text; }
  std::string path_ = (std::filesystem::temp_directory_path() / ("progress-" + std::to_string(::getpid()))).string();
};

TEST_F(ProgressFileReads, ReadsWholeLinesOnceAndTheRestLater) {
  ProgressFile file(path_);
  EXPECT_FALSE(file.read().step) << "no file yet";
  append("{\"step\":1,\"loss\":2}\n{\"step\":2,\"lo");
  auto update = file.read();
  EXPECT_EQ(update.step, 1);
  EXPECT_EQ(update.metrics.size(), 1u);
  append("ss\":1.5}\ngarbage\n");
  update = file.read();
  EXPECT_EQ(update.step, 2);
  EXPECT_EQ(update.metrics.size(), 1u);
  EXPECT_EQ(update.skipped_lines, 1);
  EXPECT_FALSE(file.read().step) << "nothing new";
}

TEST_F(ProgressFileReads, AFileRewrittenWholeIsReadEachTime) {
  ProgressFile file(path_);
  std::ofstream(path_) << "41 forward\n";
  EXPECT_EQ(file.read().step, 41);
  std::ofstream(path_) << "42 forward\n";
  EXPECT_EQ(file.read().step, 42) << "the same length as before";
}

TEST_F(ProgressFileReads, ALinkOrAFifoIsNotRead) {
  std::filesystem::create_symlink("/etc/passwd", path_);
  EXPECT_FALSE(ProgressFile(path_).read().step);
  std::filesystem::remove(path_);
  ASSERT_EQ(::mkfifo(path_.c_str(), 0600), 0);
  EXPECT_FALSE(ProgressFile(path_).read().step) << "returns at once";
}

}  // namespace
}  // namespace trainyard::agent
