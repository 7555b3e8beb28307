#pragma once
// Which of a command job's own checkpoint directories its attempt wrote, for the daemon's record
// (docs/DESIGN.md "Checkpoints"). A command writes `step-N` directories in its own format and says
// nothing of them, so the agent looks: each report names a step directory that appeared, or changed,
// in the job's checkpoint directory while this attempt ran. The daemon records reports of the
// current attempt only, so a directory that a fenced-off attempt (a rank cut off from its agent's
// daemon, or left running by a frozen agent) writes is never a resume point; nor are the ones that
// were there before this attempt started, unless this attempt rewrites them. When the job's account
// has a group of the attempt's own (agent/job_account.h), only directories of that group count, so
// what a replaced attempt writes meanwhile into the same directory is not reported as this one's.
//
// The directory is the job's to fill, and the scan runs on the agent's I/O thread: it reads at most
// `kMaxScannedEntries` entries and never follows a link.
#include <cstddef>
#include <ctime>
#include <sys/types.h>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "proto/messages.h"

namespace trainyard::agent {

class CommandCheckpointWatch {
 public:
  static constexpr std::size_t kMaxScannedEntries = 4096;

  // Remembers what `dir` holds now: none of it is this attempt's. `attempt_gid`: the group the
  // attempt's process writes with, when no other attempt has it.
  explicit CommandCheckpointWatch(std::filesystem::path dir, std::optional<gid_t> attempt_gid = std::nullopt);

  // Step directories that are new or changed since the last call (or since construction), oldest
  // first, at most kMaxCheckpointReports (proto) at once; the rest come with the next call. The
  // digest is the manifest's when the directory has a manifest.json, else empty.
  std::vector<CheckpointReport> take_new();

 private:
  std::map<std::filesystem::path, timespec> scan() const;

  std::filesystem::path dir_;
  std::optional<gid_t> attempt_gid_;
  std::map<std::filesystem::path, timespec> seen_;  // step directory -> its mtime when last seen
};

}  // namespace trainyard::agent
