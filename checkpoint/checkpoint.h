#pragma once
// The on-disk checkpoint format (docs/DESIGN.md "Checkpoints"), its own library because two sides read
// it: the simulated node's training kernel (neuron/) writes and loads checkpoints, the daemon lists,
// verifies and claims them to choose where a retry resumes.
//
// Layout: the daemon gives job J the directory <checkpoint root>/job-J (`job_checkpoint_dir`).
// In it, <dir>/step-0000000120/ holds state.json (step, data position, RNG state, model shape),
// params.bin, adam_m.bin, adam_v.bin (raw little-endian float32) and manifest.json, which lists
// every other file with its size and SHA-256. A checkpoint is valid only if every listed file is
// present with that size and digest.
//
// Atomicity: files are written into <root>/.tmp-step-...; each file is fsynced, then the directory,
// then it is renamed to its final name and the root is fsynced. A crash at any point leaves either
// no step directory or a complete one; leftovers of interrupted writes start with '.' and are
// never listed.
//
// Everything under a job's checkpoint directory is written by the job, so it is read as hostile:
// files open without following symlinks and without blocking (a FIFO named manifest.json is
// refused, not waited on), only regular files are read, JSON files are capped at 1 MiB and every
// file is read in bounded chunks; step directories that are symlinks are not listed.
//
// Data parallelism keeps the whole state replicated on every rank, so rank 0 alone writes as it
// trains (and one surviving rank when a peer is lost: neuron/trainer.h), and a checkpoint loads at
// any world size.
#include <array>
#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "proto/result.h"

namespace trainyard::checkpoint {

struct TrainingState {
  std::int64_t step = 0;              // optimizer updates completed
  std::uint64_t data_position = 0;    // global index of the next training sample
  std::array<std::uint64_t, 4> rounding_rng{};  // xoshiro256** state of stochastic rounding (neuron/rng.h)
  std::vector<int> dims;              // model shape: input, hidden..., output
  int world_size = 1;                 // ranks of the run that wrote it (informational)
  std::vector<float> params;
  std::vector<float> adam_m;
  std::vector<float> adam_v;
};

struct CheckpointInfo {
  std::filesystem::path path;
  std::int64_t step = 0;
};

// Where job `job`'s checkpoints live under the daemon's checkpoint root.
std::filesystem::path job_checkpoint_dir(const std::filesystem::path& root, std::int64_t job);
// "step-0000000120" for step 120.
std::string step_dir_name(std::int64_t step);
// The step a checkpoint directory's name gives ("/.../step-0000000040" -> 40); nullopt when the
// last component is not a step directory's name.
std::optional<std::int64_t> step_of(const std::filesystem::path& dir);

// Writes atomically under `root` (created if missing) and returns the final directory. Throws
// std::runtime_error / std::filesystem::filesystem_error when the disk refuses.
std::filesystem::path write_checkpoint(const std::filesystem::path& root, const TrainingState& state);

// The account a job's files belong to (agent/job_account.h).
struct DirOwner {
  uid_t uid = 0;
  gid_t gid = 0;
};

// Creates a job's checkpoint directory (and its parents) private to the job: mode 0700 and, given
// an `owner`, owned by the job's account (the one place that sets it). A symlink or a file in its
// place was planted: it is replaced by the directory (the link's target is untouched). A directory
// already there that belongs to neither `owner` nor the caller (the daemon's claim makes it as
// root) is refused with std::runtime_error saying whose it is: its contents are not the job's.
void create_checkpoint_dir(const std::filesystem::path& dir, std::optional<DirOwner> owner = std::nullopt);

// The uid owning `path` itself (a link is not followed); nullopt when it cannot be seen.
std::optional<uid_t> owner_uid(const std::filesystem::path& path);

// Complete checkpoints under `root`, oldest first; an absent root has none.
std::vector<CheckpointInfo> list_checkpoints(const std::filesystem::path& root);

// Whether every file matches the manifest; invalid_input saying what is wrong, naming the file.
Result<void> verify_checkpoint(const std::filesystem::path& dir);

// Whether `dir` has an entry named manifest.json, of whatever kind (a command job's own format has
// none).
bool has_manifest(const std::filesystem::path& dir);
// Hex SHA-256 of `dir`'s manifest.json as it is on disk; empty when that is not a readable regular
// file of sane size. The manifest lists every file's digest, so this one digest pins the whole
// checkpoint: the daemon records it for each checkpoint an attempt reports.
std::optional<std::string> manifest_sha256(const std::filesystem::path& dir);

// Verifies, then reads; invalid_input saying why not.
Result<TrainingState> load_checkpoint(const std::filesystem::path& dir);

// The newest checkpoint whose checksums verify; each newer one that fails is logged and skipped.
std::optional<CheckpointInfo> newest_verified_checkpoint(const std::filesystem::path& root);

// Fencing of checkpoint writes: the daemon names the attempt that owns a job's checkpoint root
// before launching it (`claim_checkpoints`, atomic and durable; a job's first attempt, with no
// earlier one to fence, is not named), and a writer publishes only while the root names its own
// attempt or none. An attempt cut off from the daemon by a partition, still running
// after the job moved on, therefore cannot replace the checkpoints its successor resumes from. (On a
// shared filesystem without leases the check and the rename are two steps; this narrows the window
// to one rename, it does not close it.)
void claim_checkpoints(const std::filesystem::path& root, std::int64_t attempt_id);
// For a job's first attempt: removes a claim left by an earlier store's job of the same id (a wiped
// store, the checkpoint root kept), so it cannot fence the new job's writer. Nothing is created:
// whoever writes creates the root private to the job (the agent for a command's rank, a
// CheckpointWriter before its first step), and a first attempt has no claim's fsyncs to pay.
// A root that is absent or not a directory holds no claim.
void remove_stale_claim(const std::filesystem::path& root);
std::optional<std::int64_t> checkpoint_owner(const std::filesystem::path& root);

// Deletes all but the newest `keep` checkpoints.
void prune_checkpoints(const std::filesystem::path& root, int keep);

struct WrittenCheckpoint {
  std::filesystem::path path;
  std::string manifest_sha256;
};

// What became of the snapshot of `step`: where it was published, or why it was not (fenced by a
// newer attempt's claim, or the disk refused it).
struct CheckpointWriteResult {
  std::int64_t step = 0;
  Result<WrittenCheckpoint> written;
};

// Writes snapshots on a background thread so training continues meanwhile, then prunes to the
// last `keep`. At most one snapshot waits behind the one being written: `submit` blocks only when
// the disk falls that far behind, which bounds memory to two copies of the state.
// Threading contract: `submit` from one thread; `on_done` runs on the writer thread.
class CheckpointWriter {
 public:
  using Done = std::function<void(const CheckpointWriteResult&)>;
  // `owner` non-zero: publish only while `root` is claimed by that attempt (or by none).
  CheckpointWriter(std::filesystem::path root, int keep, Done on_done, std::int64_t owner = 0);
  ~CheckpointWriter();  // finishes pending writes
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  void submit(TrainingState snapshot);
  void wait_idle();

 private:
  void loop();

  const std::filesystem::path root_;
  const int keep_;
  const Done on_done_;
  const std::int64_t owner_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<TrainingState> pending_;
  bool writing_ = false;
  bool closing_ = false;
  std::thread thread_;
};

}  // namespace trainyard::checkpoint
