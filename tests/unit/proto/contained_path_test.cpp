#include "proto/contained_path.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "proto/errors.h"
#include "proto/json_reader.h"

namespace fs = std::filesystem;
using trainyard::InvalidInput;
using trainyard::path_inside;
using trainyard::path_under;

namespace {

class ContainedPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() / ("contained-path-" + std::to_string(::getpid()));
    fs::remove_all(base_);
    fs::create_directories(root_ = base_ / "root");
    fs::create_directories(outside_ = base_ / "outside");
  }
  void TearDown() override { fs::remove_all(base_); }

  fs::path base_, root_, outside_;
};

TEST_F(ContainedPathTest, JoinsAPlainRelativeName) {
  EXPECT_EQ(path_under(root_, "17", "attempt_id"), root_ / "17");
  EXPECT_EQ(path_under(root_, "job-3/step-9", "dir"), root_ / "job-3" / "step-9");
}

TEST_F(ContainedPathTest, RefusesDotDotAbsoluteEmptyAndNul) {
  for (const std::string& bad : std::vector<std::string>{"..", "../outside", "a/../../outside", "./a", "a//b", "a/", "", "/etc/passwd",
                                std::string("a\0b", 3)}) {
    EXPECT_THROW(path_under(root_, bad, "f"), InvalidInput) << bad;
  }
}

TEST_F(ContainedPathTest, NamesTheFieldItRefuses) {
  try {
    path_under(root_, "../x", "attempt_id");
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_EQ(e.field(), "attempt_id");
  }
}

TEST_F(ContainedPathTest, RefusesASymlinkPlantedWhereTheDirectoryWouldBe) {
  fs::create_directory_symlink(outside_, root_ / "job-3");
  EXPECT_THROW(path_under(root_, "job-3", "dir"), InvalidInput);
  EXPECT_THROW(path_under(root_, "job-3/step-9", "dir"), InvalidInput);
}

TEST_F(ContainedPathTest, RefusesASymlinkFurtherDown) {
  fs::create_directories(root_ / "job-3");
  fs::create_symlink(outside_, root_ / "job-3" / "step-9");
  EXPECT_THROW(path_under(root_, "job-3/step-9", "dir"), InvalidInput);
}

TEST_F(ContainedPathTest, TrustsASymlinkedRoot) {
  fs::create_directory_symlink(root_, base_ / "root-link");
  EXPECT_EQ(path_under(base_ / "root-link", "job-3", "dir"), base_ / "root-link" / "job-3");
}

TEST_F(ContainedPathTest, InsideAcceptsAPathStrictlyBelowTheRoot) {
  const std::string dir = (root_ / "job-3").string();
  EXPECT_EQ(path_inside(root_, dir, "checkpoint_dir"), fs::path(dir));
  EXPECT_EQ(path_inside(root_.string() + "/", dir, "checkpoint_dir"), fs::path(dir));
}

TEST_F(ContainedPathTest, InsideRefusesPathsThatLeaveTheRoot) {
  for (const std::string& bad : std::vector<std::string>{outside_.string(), root_.string(), root_.string() + "/", root_.string() + "-sibling/x",
                                root_.string() + "/../outside", root_.string() + "/job-3/../../outside",
                                std::string("job-3"), std::string("/etc/passwd")}) {
    EXPECT_THROW(path_inside(root_, bad, "checkpoint_dir"), InvalidInput) << bad;
  }
}

TEST_F(ContainedPathTest, InsideRefusesASymlinkBelowTheRoot) {
  fs::create_directory_symlink(outside_, root_ / "job-3");
  EXPECT_THROW(path_inside(root_, (root_ / "job-3").string(), "checkpoint_dir"), InvalidInput);
  EXPECT_THROW(path_inside(root_, (root_ / "job-3" / "ckpt-1").string(), "resume_from"), InvalidInput);
}

TEST(PlainAbsolutePathTest, AcceptsOnlyAbsolutePathsWithoutDotDot) {
  EXPECT_EQ(trainyard::plain_absolute_path("/srv/ckpt/job-3", "checkpoint_dir"), fs::path("/srv/ckpt/job-3"));
  for (const std::string& bad : std::vector<std::string>{"", "/", "job-3", "/srv/../etc", "/srv//x", "/srv/./x",
                                                          std::string("/srv\0x", 6)}) {
    EXPECT_THROW(trainyard::plain_absolute_path(bad, "checkpoint_dir"), InvalidInput) << bad;
  }
}

// Node names, share names and label keys become no path component the agent does not choose; the
// validation they all go through refuses anything that could walk a path anyway.
TEST(NameValidationTest, RefusesNamesThatCouldWalkAPath) {
  for (const std::string bad : {"..", ".", "/etc/passwd", "a/b", ".hidden", "a\\b"}) {
    EXPECT_THROW(trainyard::check_name("name", bad), InvalidInput) << bad;
  }
}

}  // namespace
