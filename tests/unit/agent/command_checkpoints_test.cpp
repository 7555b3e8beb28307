// What a command's rank 0 reports of its checkpoints (agent/command_checkpoints.h): the step
// directories that appeared or changed while its attempt ran, never those that were there before.
#include <gtest/gtest.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "agent/command_checkpoints.h"
#include "checkpoint/checkpoint.h"
#include "tests/support/temp_dir.h"

namespace trainyard::agent {
namespace {
namespace fs = std::filesystem;

std::vector<std::int64_t> steps_of(const std::vector<CheckpointReport>& reports) {
  std::vector<std::int64_t> steps;
  for (const auto& r : reports) steps.push_back(r.step);
  return steps;
}

// Moves `dir`'s mtime off whatever the last scan saw, as a write into it later would.
void touch_later(const fs::path& dir) {
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  const timespec times[2] = {st.st_atim, {st.st_mtim.tv_sec + 5, st.st_mtim.tv_nsec}};
  ASSERT_EQ(::utimensat(AT_FDCWD, dir.c_str(), times, 0), 0);
}

TEST(CommandCheckpoints, ReportsStepDirectoriesThatAppearOrChangeNotThoseFromBefore) {
  TempDir root;
  const fs::path dir = root.path() / "job-1";
  fs::create_directories(dir / "step-0000000005");  // an earlier attempt's
  fs::create_directories(dir / "step-0000000007");
  CommandCheckpointWatch watch(dir);
  EXPECT_TRUE(watch.take_new().empty()) << "what was there before the attempt is not its";

  fs::create_directory(dir / "step-20");
  fs::create_directory(dir / "step-0000000010");
  fs::create_directory(dir / "not-a-step");
  std::ofstream(dir / "step-0000000011").close();  // a file, not a step directory
  fs::create_directory_symlink(dir / "step-20", dir / "step-0000000099");
  const auto reports = watch.take_new();
  EXPECT_EQ(steps_of(reports), (std::vector<std::int64_t>{10, 20}));
  EXPECT_EQ(reports[0].manifest_sha256, "") << "the command's own format has no manifest";
  EXPECT_TRUE(watch.take_new().empty()) << "each is reported once while it stays as it was";

  touch_later(dir / "step-0000000007");  // this attempt rewrote an earlier step
  EXPECT_EQ(steps_of(watch.take_new()), (std::vector<std::int64_t>{7}));
}

TEST(CommandCheckpoints, WithAGroupOfTheAttemptsOwnOnlyItsDirectoriesAreReported) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a directory another group needs root";
  TempDir root;
  const fs::path dir = root.path() / "job-4";
  fs::create_directories(dir);
  const gid_t mine = 0x70000002, replaced = 0x70000001;
  CommandCheckpointWatch watch(dir, mine);
  fs::create_directory(dir / "step-0000000008");
  ASSERT_EQ(::chown((dir / "step-0000000008").c_str(), 0, mine), 0);
  fs::create_directory(dir / "step-0000000009");  // a replaced attempt, still running, wrote it
  ASSERT_EQ(::chown((dir / "step-0000000009").c_str(), 0, replaced), 0);
  EXPECT_EQ(steps_of(watch.take_new()), (std::vector<std::int64_t>{8}));
}

TEST(CommandCheckpoints, AStepDirectoryWithAManifestIsReportedWithItsDigest) {
  TempDir root;
  const fs::path dir = root.path() / "job-2";
  CommandCheckpointWatch watch(dir);  // not made yet
  checkpoint::TrainingState state;
  state.step = 3;
  state.dims = {1, 1};
  state.params = {1, 2};
  state.adam_m = {0, 0};
  state.adam_v = {0, 0};
  const fs::path written = checkpoint::write_checkpoint(dir, state);
  const auto reports = watch.take_new();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].step, 3);
  EXPECT_EQ(reports[0].manifest_sha256, checkpoint::manifest_sha256(written).value());
}

TEST(CommandCheckpoints, AFloodedDirectoryIsReadOnlyUpToTheBound) {
  TempDir root;
  const fs::path dir = root.path() / "job-3";
  CommandCheckpointWatch watch(dir);
  fs::create_directories(dir);
  for (std::size_t i = 0; i < CommandCheckpointWatch::kMaxScannedEntries + 100; ++i) {
    fs::create_directory(dir / checkpoint::step_dir_name(static_cast<std::int64_t>(i)));
  }
  EXPECT_EQ(watch.take_new().size(), kMaxCheckpointReports) << "one message's worth at a time";
  std::size_t reported = kMaxCheckpointReports;
  for (int i = 0; i < 5; ++i) reported += watch.take_new().size();
  EXPECT_LE(reported, CommandCheckpointWatch::kMaxScannedEntries) << "entries past the bound were read";
  EXPECT_GT(reported, 3 * kMaxCheckpointReports);
}

}  // namespace
}  // namespace trainyard::agent
