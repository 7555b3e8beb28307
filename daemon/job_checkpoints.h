#pragma once
// Which checkpoints in a job's directory a retry may resume from (docs/DESIGN.md "Checkpoints").
// The directory is the job's to write, so what is in it proves nothing: a checkpoint
// counts only when an attempt of this job reported it (store.h CheckpointRecord) and its manifest
// still has the digest that attempt reported, and verifies. A command job's step directories
// without a manifest are its own format: they count when the agent of a current attempt reported
// them (agent/command_checkpoints.h), so what a fenced-off attempt writes is never resumed from,
// and when the job's account wrote them (they belong to the owner of the job's directory, which
// the agent gives to the job's account), so one planted by another account is not either.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

namespace trainyard::daemon {

struct CheckpointStatus {
  std::int64_t step = 0;
  std::string path;
  std::optional<AttemptId> recorded_by;  // the attempt that reported this step, if any did
  bool valid = false;                    // a retry may resume from it
  std::string problem;                   // why not
};

// Every step directory under `dir`, oldest first, judged against the job's records. Reads the
// job's files (checkpoint.h reads them as hostile): run it on the file worker only.
std::vector<CheckpointStatus> inspect_checkpoints(const std::filesystem::path& dir,
                                                  const std::vector<store::CheckpointRecord>& recorded, JobKind kind);

// Bytes of the regular files under `dir` (symlinks are not followed); 0 when it is absent. On the
// file worker only, as above.
std::int64_t directory_bytes(const std::filesystem::path& dir);

// The newest valid checkpoint.
std::optional<CheckpointStatus> resume_point(const std::vector<CheckpointStatus>& statuses);

}  // namespace trainyard::daemon
