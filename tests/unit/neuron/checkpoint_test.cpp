#include <gtest/gtest.h>

#include <fstream>

#include "agent/neuron/checkpoint.h"

namespace trainyard::neuron {
namespace {
namespace fs = std::filesystem;

// A fresh directory under the test temp dir, removed afterwards.
class TempDir {
 public:
  TempDir() : path_(fs::path(::testing::TempDir()) / ("neuron-ckpt-" + std::to_string(::getpid()) + "-" +
                                                       ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::remove_all(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TrainingState sample_state(std::int64_t step) {
  TrainingState s;
  s.step = step;
  s.data_position = static_cast<std::uint64_t>(step) * 64;
  s.rounding_rng = Rng(static_cast<std::uint64_t>(step)).state();
  s.dims = {3, 4, 2};
  s.world_size = 4;
  for (int i = 0; i < 26; ++i) {
    s.params.push_back(static_cast<float>(i) * 0.5f + static_cast<float>(step));
    s.adam_m.push_back(static_cast<float>(-i));
    s.adam_v.push_back(static_cast<float>(i * i));
  }
  return s;
}

void flip_a_byte(const fs::path& file) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(5);
  char c = 0;
  f.get(c);
  f.seekp(5);
  f.put(static_cast<char>(c ^ 0x40));
}

TEST(Checkpoint, RoundTripsEveryField) {
  TempDir dir;
  const TrainingState s = sample_state(120);
  const fs::path written = write_checkpoint(dir.path(), s);
  EXPECT_EQ(written.filename(), "step-0000000120");
  EXPECT_EQ(verify_checkpoint(written), "");
  const LoadedCheckpoint loaded = load_checkpoint(written);
  ASSERT_TRUE(loaded.state) << loaded.problem;
  EXPECT_EQ(loaded.state->step, 120);
  EXPECT_EQ(loaded.state->data_position, s.data_position);
  EXPECT_EQ(loaded.state->rounding_rng, s.rounding_rng);
  EXPECT_EQ(loaded.state->dims, s.dims);
  EXPECT_EQ(loaded.state->world_size, 4);
  EXPECT_EQ(loaded.state->params, s.params);
  EXPECT_EQ(loaded.state->adam_m, s.adam_m);
  EXPECT_EQ(loaded.state->adam_v, s.adam_v);
  // Nothing but the final directory is left behind.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST(Checkpoint, CorruptionOfAnyFileIsDetectedAndNamed) {
  TempDir dir;
  for (const char* file : {"params.bin", "adam_m.bin", "adam_v.bin", "state.json"}) {
    const fs::path written = write_checkpoint(dir.path() / file, sample_state(10));
    flip_a_byte(written / file);
    const std::string problem = verify_checkpoint(written);
    EXPECT_NE(problem.find(file), std::string::npos) << problem;
    EXPECT_FALSE(load_checkpoint(written).state);
  }
}

TEST(Checkpoint, TruncatedMissingOrUnlistedFilesAreDetected) {
  TempDir dir;
  const fs::path a = write_checkpoint(dir.path(), sample_state(1));
  fs::resize_file(a / "adam_v.bin", 8);
  EXPECT_EQ(verify_checkpoint(a), "adam_v.bin: size differs from manifest");
  const fs::path b = write_checkpoint(dir.path(), sample_state(2));
  fs::remove(b / "params.bin");
  EXPECT_EQ(verify_checkpoint(b), "params.bin: missing or unreadable");
  const fs::path c = write_checkpoint(dir.path(), sample_state(3));
  fs::remove(c / "manifest.json");
  EXPECT_EQ(verify_checkpoint(c), "manifest.json: missing or malformed");
}

TEST(Checkpoint, ResumePicksTheNewestThatVerifiesElseTheOneBefore) {
  TempDir dir;
  for (std::int64_t step : {10, 20, 30}) write_checkpoint(dir.path(), sample_state(step));
  EXPECT_EQ(newest_verified_checkpoint(dir.path())->step, 30);
  flip_a_byte(dir.path() / "step-0000000030" / "params.bin");
  EXPECT_EQ(newest_verified_checkpoint(dir.path())->step, 20);
  flip_a_byte(dir.path() / "step-0000000020" / "adam_m.bin");
  EXPECT_EQ(newest_verified_checkpoint(dir.path())->step, 10);
  flip_a_byte(dir.path() / "step-0000000010" / "state.json");
  EXPECT_FALSE(newest_verified_checkpoint(dir.path()));
  EXPECT_FALSE(newest_verified_checkpoint(dir.path() / "absent"));
}

TEST(Checkpoint, ListingIgnoresInterruptedWritesAndSortsBySteps) {
  TempDir dir;
  write_checkpoint(dir.path(), sample_state(200));
  write_checkpoint(dir.path(), sample_state(30));
  fs::create_directories(dir.path() / ".tmp-step-0000000300-1");
  fs::create_directories(dir.path() / "step-12x");
  const auto listed = list_checkpoints(dir.path());
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].step, 30);
  EXPECT_EQ(listed[1].step, 200);
}

TEST(Checkpoint, RewritingAStepReplacesIt) {
  TempDir dir;
  write_checkpoint(dir.path(), sample_state(10));
  TrainingState again = sample_state(10);
  again.params[0] = 99.0f;
  write_checkpoint(dir.path(), again);
  EXPECT_EQ(load_checkpoint(dir.path() / "step-0000000010").state->params[0], 99.0f);
  EXPECT_EQ(list_checkpoints(dir.path()).size(), 1u);
}

TEST(CheckpointWriter, WritesInTheBackgroundAndKeepsTheLastK) {
  TempDir dir;
  std::vector<CheckpointWriteResult> done;
  {
    CheckpointWriter writer(dir.path(), 2, [&](const CheckpointWriteResult& r) { done.push_back(r); });
    for (std::int64_t step : {5, 10, 15, 20}) writer.submit(sample_state(step));
    writer.wait_idle();
    EXPECT_EQ(done.size(), 4u);
  }
  for (const auto& r : done) EXPECT_EQ(r.error, "");
  const auto listed = list_checkpoints(dir.path());
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].step, 15);
  EXPECT_EQ(listed[1].step, 20);
}

TEST(Checkpoint, ACommandJobsOwnFormatResumesWhenItHasNoManifest) {
  TempDir dir;
  write_checkpoint(dir.path(), sample_state(10));
  fs::create_directories(dir.path() / "step-0000000020");  // the job's own files, no manifest
  std::ofstream(dir.path() / "step-0000000020" / "model.pt") << "weights";
  EXPECT_EQ(newest_resumable_checkpoint(dir.path())->step, 20);
  write_checkpoint(dir.path(), sample_state(30));
  flip_a_byte(dir.path() / "step-0000000030" / "params.bin");
  EXPECT_EQ(newest_resumable_checkpoint(dir.path())->step, 20) << "a manifest that does not verify is skipped";
  EXPECT_FALSE(newest_resumable_checkpoint(dir.path() / "absent"));
}

TEST(CheckpointWriter, AnAttemptThatNoLongerOwnsTheRootIsFencedOff) {
  TempDir dir;
  claim_checkpoints(dir.path(), 7);
  EXPECT_EQ(checkpoint_owner(dir.path()), 7);
  std::vector<CheckpointWriteResult> done;
  {
    CheckpointWriter stale(dir.path(), 3, [&](const CheckpointWriteResult& r) { done.push_back(r); }, 6);
    stale.submit(sample_state(40));
    stale.wait_idle();
    CheckpointWriter current(dir.path(), 3, [&](const CheckpointWriteResult& r) { done.push_back(r); }, 7);
    current.submit(sample_state(30));
    current.wait_idle();
  }
  ASSERT_EQ(done.size(), 2u);
  EXPECT_NE(done[0].error.find("fenced: attempt 7 owns"), std::string::npos) << done[0].error;
  EXPECT_EQ(done[1].error, "");
  const auto listed = list_checkpoints(dir.path());
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].step, 30) << "the stale attempt replaced its successor's checkpoints";
}

TEST(CheckpointWriter, ReportsAWriteThatFails) {
  TempDir dir;
  fs::create_directories(dir.path());
  std::ofstream(dir.path() / "not-a-dir") << "x";
  std::vector<CheckpointWriteResult> done;
  {
    CheckpointWriter writer(dir.path() / "not-a-dir", 2, [&](const CheckpointWriteResult& r) { done.push_back(r); });
    writer.submit(sample_state(5));
  }
  ASSERT_EQ(done.size(), 1u);
  EXPECT_NE(done[0].error, "");
  EXPECT_TRUE(done[0].path.empty());
}

}  // namespace
}  // namespace trainyard::neuron
