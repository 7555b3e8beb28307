#include "agent/launch_paths.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "proto/errors.h"

namespace fs = std::filesystem;
using trainyard::InvalidInput;
using trainyard::LaunchMsg;
using trainyard::agent::attempt_dir;
using trainyard::agent::check_checkpoint_paths;

namespace {

class LaunchPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("launch-paths-" + std::to_string(::getpid()));
    fs::remove_all(base_);
    fs::create_directories(work_ = base_ / "work");
    fs::create_directories(work_ / "attempts");
    fs::create_directories(root_ = base_ / "checkpoints");
    fs::create_directories(outside_ = base_ / "outside");
  }
  void TearDown() override { fs::remove_all(base_); }

  LaunchMsg launch_with(const std::string& checkpoint_dir, std::optional<std::string> resume_from = std::nullopt) {
    LaunchMsg l;
    l.attempt_id = 7;
    l.checkpoint_dir = checkpoint_dir;
    l.resume_from = std::move(resume_from);
    return l;
  }

  std::string field_refused(const LaunchMsg& l, const std::string& root) {
    try {
      check_checkpoint_paths(l, root);
    } catch (const InvalidInput& e) {
      return e.field();
    }
    return "";
  }

  fs::path base_, work_, root_, outside_;
};

TEST_F(LaunchPathsTest, AttemptDirIsUnderTheAgentsAttempts) {
  EXPECT_EQ(attempt_dir(work_.string(), "", 7), work_ / "attempts" / "7");
  EXPECT_EQ(attempt_dir(work_.string(), "0a1b", 7), work_ / "attempts" / "0a1b-7") << "another database's attempt 7";
}

TEST_F(LaunchPathsTest, ASymlinkPlantedAsTheAttemptDirIsRefused) {
  fs::create_directory_symlink(outside_, work_ / "attempts" / "7");
  EXPECT_THROW(attempt_dir(work_.string(), "", 7), InvalidInput);
}

TEST_F(LaunchPathsTest, ACheckpointDirAndResumePointUnderTheRootAreAccepted) {
  const std::string dir = (root_ / "job-3").string();
  EXPECT_EQ(field_refused(launch_with(dir, dir + "/ckpt-00000010"), root_.string()), "");
  EXPECT_EQ(field_refused(launch_with(""), root_.string()), "");
}

TEST_F(LaunchPathsTest, ACheckpointDirOutsideTheRootIsRefused) {
  for (const std::string& bad : {outside_.string(), root_.string() + "/../outside", std::string("/etc"),
                                 std::string("job-3"), root_.string()}) {
    EXPECT_EQ(field_refused(launch_with(bad), root_.string()), "checkpoint_dir") << bad;
  }
}

TEST_F(LaunchPathsTest, ASymlinkPlantedAsTheCheckpointDirIsRefused) {
  fs::create_directory_symlink(outside_, root_ / "job-3");
  EXPECT_EQ(field_refused(launch_with((root_ / "job-3").string()), root_.string()), "checkpoint_dir");
}

TEST_F(LaunchPathsTest, AResumePointOutsideTheJobsCheckpointDirIsRefused) {
  const std::string dir = (root_ / "job-3").string();
  fs::create_directories(root_ / "job-4" / "ckpt-1");
  for (const std::string& bad : {(root_ / "job-4" / "ckpt-1").string(), dir + "/../job-4/ckpt-1", outside_.string(),
                                 std::string("ckpt-1")}) {
    EXPECT_EQ(field_refused(launch_with(dir, bad), root_.string()), "resume_from") << bad;
  }
  EXPECT_EQ(field_refused(launch_with("", dir + "/ckpt-1"), root_.string()), "resume_from");
}

TEST_F(LaunchPathsTest, ASymlinkedResumePointIsRefused) {
  fs::create_directories(root_ / "job-3");
  fs::create_directory_symlink(outside_, root_ / "job-3" / "ckpt-1");
  EXPECT_EQ(field_refused(launch_with((root_ / "job-3").string(), (root_ / "job-3" / "ckpt-1").string()),
                          root_.string()),
            "resume_from");
}

TEST_F(LaunchPathsTest, WithoutARootOnlyPlainAbsolutePathsPass) {
  EXPECT_EQ(field_refused(launch_with("/srv/ckpt/job-3"), ""), "");
  EXPECT_EQ(field_refused(launch_with("/srv/ckpt/../../etc"), ""), "checkpoint_dir");
  EXPECT_EQ(field_refused(launch_with("job-3"), ""), "checkpoint_dir");
  EXPECT_EQ(field_refused(launch_with("/srv/ckpt/job-3", "/srv/ckpt/job-4/ckpt-1"), ""), "resume_from");
}

}  // namespace
