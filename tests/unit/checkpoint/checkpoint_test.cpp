#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <sstream>

#include "checkpoint/checkpoint.h"
#include "tests/support/temp_dir.h"

namespace trainyard::checkpoint {
namespace {
namespace fs = std::filesystem;

TrainingState sample_state(std::int64_t step) {
  TrainingState s;
  s.step = step;
  s.data_position = static_cast<std::uint64_t>(step) * 64;
  s.rounding_rng = {static_cast<std::uint64_t>(step), 0x9E3779B97F4A7C15ULL, 7, ~std::uint64_t{0}};
  s.dims = {3, 4, 2};
  s.world_size = 4;
  for (int i = 0; i < 26; ++i) {
    s.params.push_back(static_cast<float>(i) * 0.5f + static_cast<float>(step));
    s.adam_m.push_back(static_cast<float>(-i));
    s.adam_v.push_back(static_cast<float>(i * i));
  }
  return s;
}

// What verifying found wrong; empty when the checkpoint verified.
std::string problem(const Result<void>& verified) { return verified ? "" : verified.error().message; }

void flip_a_byte(const fs::path& file) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(5);
  char c = 0;
  f.get(c);
  f.seekp(5);
  f.put(static_cast<char>(c ^ 0x40));
}

TEST(CheckpointLayout, NamesJobAndStepDirectoriesAndReadsTheStepBack) {
  EXPECT_EQ(job_checkpoint_dir("/srv/ckpt", 3), fs::path("/srv/ckpt/job-3"));
  EXPECT_EQ(step_dir_name(40), "step-0000000040");
  EXPECT_EQ(step_of("/srv/ckpt/job-3/step-0000000040"), 40);
  EXPECT_EQ(step_of(job_checkpoint_dir("/c", 1) / step_dir_name(1234567)), 1234567);
  for (const char* not_a_step : {"/c/job-3/model", "/c/job-3/step-", "/c/job-3/step-12x", "/c/step-1/params.bin",
                                  "/c/job-3/.tmp-step-0000000001-7", "/c/job-3/step-1234567890123456789"}) {
    EXPECT_EQ(step_of(not_a_step), std::nullopt) << not_a_step;
  }
}

TEST(Checkpoint, RoundTripsEveryField) {
  TempDir dir;
  const TrainingState s = sample_state(120);
  const fs::path written = write_checkpoint(dir.path(), s);
  EXPECT_EQ(written.filename(), "step-0000000120");
  EXPECT_EQ(problem(verify_checkpoint(written)), "");
  const Result<TrainingState> loaded = load_checkpoint(written);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->step, 120);
  EXPECT_EQ(loaded->data_position, s.data_position);
  EXPECT_EQ(loaded->rounding_rng, s.rounding_rng);
  EXPECT_EQ(loaded->dims, s.dims);
  EXPECT_EQ(loaded->world_size, 4);
  EXPECT_EQ(loaded->params, s.params);
  EXPECT_EQ(loaded->adam_m, s.adam_m);
  EXPECT_EQ(loaded->adam_v, s.adam_v);
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
    const std::string found = problem(verify_checkpoint(written));
    EXPECT_NE(found.find(file), std::string::npos) << found;
    const Result<TrainingState> loaded = load_checkpoint(written);
    ASSERT_FALSE(loaded);
    EXPECT_EQ(loaded.error().code, ErrorCode::invalid_input) << "a job's files are input";
  }
}

TEST(Checkpoint, TruncatedMissingOrUnlistedFilesAreDetected) {
  TempDir dir;
  const fs::path a = write_checkpoint(dir.path(), sample_state(1));
  fs::resize_file(a / "adam_v.bin", 8);
  EXPECT_EQ(problem(verify_checkpoint(a)), "adam_v.bin: size differs from manifest");
  const fs::path b = write_checkpoint(dir.path(), sample_state(2));
  fs::remove(b / "params.bin");
  EXPECT_EQ(problem(verify_checkpoint(b)), "params.bin: missing or unreadable");
  const fs::path c = write_checkpoint(dir.path(), sample_state(3));
  fs::remove(c / "manifest.json");
  EXPECT_EQ(problem(verify_checkpoint(c)), "manifest.json: missing or malformed");
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
  EXPECT_EQ(load_checkpoint(dir.path() / "step-0000000010")->params[0], 99.0f);
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
  for (const auto& r : done) EXPECT_TRUE(r.written.ok()) << r.written.error().message;
  const auto listed = list_checkpoints(dir.path());
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].step, 15);
  EXPECT_EQ(listed[1].step, 20);
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
  ASSERT_FALSE(done[0].written.ok());
  EXPECT_NE(done[0].written.error().message.find("fenced: attempt 7 owns"), std::string::npos)
      << done[0].written.error().message;
  EXPECT_TRUE(done[1].written.ok());
  const auto listed = list_checkpoints(dir.path());
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].step, 30) << "the stale attempt replaced its successor's checkpoints";
}

TEST(CheckpointWriter, AFirstAttemptsUnclaimedRootIsWrittenEvenOverALeftoverClaim) {
  TempDir dir;
  claim_checkpoints(dir.path() / "job-1", 9);  // a job of the same id in a store since wiped
  remove_stale_claim(dir.path() / "job-1");
  EXPECT_FALSE(checkpoint_owner(dir.path() / "job-1")) << "the leftover claim would fence the new job";
  EXPECT_NO_THROW(remove_stale_claim(dir.path() / "job-2")) << "a root nobody made yet holds no claim";
  std::vector<CheckpointWriteResult> done;
  {
    CheckpointWriter first(dir.path() / "job-1", 3, [&](const CheckpointWriteResult& r) { done.push_back(r); }, 1);
    first.submit(sample_state(10));
    first.wait_idle();
  }
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].written.ok());
  EXPECT_EQ(list_checkpoints(dir.path() / "job-1").size(), 1u);
}

TEST(CheckpointWriter, ReportsAWriteThatFails) {
  TempDir dir;
  fs::create_directories(dir.path());
  std::ofstream(dir.path() / "not-a-dir") << "x";
  std::vector<CheckpointWriteResult> done;
  {
    CheckpointWriter writer(dir.path() / "not-a-dir" / "checkpoints", 2,
                            [&](const CheckpointWriteResult& r) { done.push_back(r); });
    writer.submit(sample_state(5));
  }
  ASSERT_EQ(done.size(), 1u);
  ASSERT_FALSE(done[0].written.ok());
  EXPECT_FALSE(done[0].written.error().message.empty());
}

// Checkpoint directories are the job's to write, so their contents are hostile.

// Runs `read` on its own thread and fails the test when it has not returned in time: a blocking
// open of a FIFO waits for a writer for ever. The FIFO is then opened for writing to release it.
template <typename Read>
auto returns_promptly(Read read, const fs::path& fifo) {
  auto result = std::async(std::launch::async, read);
  if (result.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    ADD_FAILURE() << "reading blocked on the FIFO " << fifo;
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  }
  return result.get();
}

void replace_with_fifo(const fs::path& file) {
  fs::remove(file);
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
}

TEST(CheckpointHostileFiles, AFifoAsTheManifestIsInvalidAndDoesNotBlock) {
  TempDir dir;
  const fs::path written = write_checkpoint(dir.path(), sample_state(10));
  replace_with_fifo(written / "manifest.json");
  EXPECT_EQ(returns_promptly([&] { return problem(verify_checkpoint(written)); }, written / "manifest.json"),
            "manifest.json: missing or malformed");
  EXPECT_FALSE(returns_promptly([&] { return manifest_sha256(written); }, written / "manifest.json"));
  EXPECT_FALSE(returns_promptly([&] { return newest_verified_checkpoint(dir.path()); }, written / "manifest.json"));
}

TEST(CheckpointHostileFiles, AFifoAsAListedFileIsUnreadableAndDoesNotBlock) {
  TempDir dir;
  const fs::path written = write_checkpoint(dir.path(), sample_state(10));
  replace_with_fifo(written / "params.bin");
  EXPECT_EQ(returns_promptly([&] { return problem(verify_checkpoint(written)); }, written / "params.bin"),
            "params.bin: missing or unreadable");
  EXPECT_FALSE(returns_promptly([&] { return load_checkpoint(written).ok(); }, written / "params.bin"));
}

TEST(CheckpointHostileFiles, AFifoAsTheOwnerFileIsNoOwner) {
  TempDir dir;
  claim_checkpoints(dir.path(), 7);
  replace_with_fifo(dir.path() / "OWNER");
  EXPECT_FALSE(returns_promptly([&] { return checkpoint_owner(dir.path()); }, dir.path() / "OWNER"));
}

TEST(CheckpointHostileFiles, ASymlinkedManifestIsNotFollowed) {
  TempDir dir;
  const fs::path real = write_checkpoint(dir.path(), sample_state(10));
  const fs::path copy = dir.path() / "step-0000000020";
  fs::create_directory(copy);
  for (const char* file : {"state.json", "params.bin", "adam_m.bin", "adam_v.bin"}) fs::copy_file(real / file, copy / file);
  fs::create_symlink(real / "manifest.json", copy / "manifest.json");
  EXPECT_EQ(problem(verify_checkpoint(copy)), "manifest.json: missing or malformed");
  EXPECT_FALSE(manifest_sha256(copy));
  EXPECT_EQ(newest_verified_checkpoint(dir.path())->step, 10) << "a symlink is a manifest that does not verify";
}

TEST(CheckpointHostileFiles, ASymlinkedStepDirectoryIsNotListed) {
  TempDir dir;
  const fs::path real = write_checkpoint(dir.path(), sample_state(10));
  fs::create_directory_symlink(real, dir.path() / "step-0000000030");
  const auto listed = list_checkpoints(dir.path());
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].step, 10);
}

TEST(CheckpointHostileFiles, AnOversizedManifestIsInvalid) {
  TempDir dir;
  const fs::path written = write_checkpoint(dir.path(), sample_state(10));
  std::stringstream manifest;
  manifest << std::ifstream(written / "manifest.json").rdbuf();
  fs::remove(written / "manifest.json");
  // Still the valid manifest, behind 2 MiB of JSON whitespace.
  std::ofstream(written / "manifest.json") << std::string(2 << 20, ' ') << manifest.str();
  EXPECT_EQ(problem(verify_checkpoint(written)), "manifest.json: missing or malformed");
  EXPECT_FALSE(manifest_sha256(written));
}

TEST(CheckpointDirectory, IsPrivateToTheJobAndNeverASymlink) {
  TempDir dir;
  fs::create_directories(dir.path());
  const fs::path job = dir.path() / "job-1";
  create_checkpoint_dir(job);
  struct stat st {};
  ASSERT_EQ(::stat(job.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  fs::permissions(job, fs::perms::all);
  create_checkpoint_dir(job);
  ASSERT_EQ(::stat(job.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u) << "an existing directory is made private again";
  // Planted in place of the next job's directory: a symlink to this one.
  fs::create_directory_symlink(job, dir.path() / "job-2");
  claim_checkpoints(dir.path() / "job-2", 3);
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(dir.path() / "job-2"))) << "claimed through a symlink";
  EXPECT_FALSE(checkpoint_owner(job)) << "the symlink's target was written";
  EXPECT_EQ(checkpoint_owner(dir.path() / "job-2"), 3);
}

TEST(CheckpointDirectory, BelongsToTheJobsAccount) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a directory away needs root";
  TempDir dir;
  fs::create_directories(dir.path());
  const fs::path job = dir.path() / "job-1";
  create_checkpoint_dir(job, DirOwner{65534, 65534});
  struct stat st {};
  ASSERT_EQ(::stat(job.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

uid_t owner_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_uid;
}

TEST(CheckpointDirectory, OneAnotherAccountMadeIsRefusedNotTakenOver) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a directory away needs root";
  TempDir dir;
  fs::create_directories(dir.path());
  const fs::path job = dir.path() / "job-1";
  create_checkpoint_dir(job, DirOwner{65534, 65534});
  create_checkpoint_dir(job, DirOwner{65534, 65534});  // the job's own, again: kept
  try {
    create_checkpoint_dir(job, DirOwner{1610612737, 1610612737});
    ADD_FAILURE() << "took over a directory uid 65534 made";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("belongs to uid 65534, not to the job's account (uid 1610612737)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(owner_of(job), 65534u) << "left as it was";
  const fs::path claimed = dir.path() / "job-2";
  claim_checkpoints(claimed, 4);  // the daemon, as root, before the job's first rank starts
  create_checkpoint_dir(claimed, DirOwner{1610612738, 1610612738});
  EXPECT_EQ(owner_of(claimed), 1610612738u) << "a directory the caller made is given to the job";
}

TEST(CheckpointWriter, ReportsTheDigestOfTheManifestItWrote) {
  TempDir dir;
  std::vector<CheckpointWriteResult> done;
  {
    CheckpointWriter writer(dir.path(), 2, [&](const CheckpointWriteResult& r) { done.push_back(r); });
    writer.submit(sample_state(5));
  }
  ASSERT_EQ(done.size(), 1u);
  ASSERT_TRUE(done[0].written.ok());
  EXPECT_EQ(done[0].written->manifest_sha256.size(), 64u);
  EXPECT_EQ(done[0].written->manifest_sha256, manifest_sha256(done[0].written->path));
}

}  // namespace
}  // namespace trainyard::checkpoint
