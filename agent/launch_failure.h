#pragma once
// Why a rank's process never ran its program, in words its owner can act on: the command that is
// not on the PATH (named, with the PATH searched), a file without execute permission, a script
// whose interpreter is missing, a working directory the job's account cannot enter (with its mode
// and owner). The child only says at which step it stopped and the errno (agent/process_spawn.h);
// this looks at the files afterwards to tell the cases apart, and says only what the job's account
// could have found out itself (a directory on the way it cannot search hides what lies below).
//
// Every text starts with kLaunchFailedPrefix: the daemon's failure rules classify on it, and such a
// failure is the job's own and is not retried (a retry would meet the same error).
#include <optional>
#include <string>
#include <string_view>

#include "agent/job_account.h"
#include "agent/process_spawn.h"

namespace trainyard::agent {

inline constexpr std::string_view kLaunchFailedPrefix = "launch failed: ";

struct LaunchContext {
  std::string program;                 // argv[0]
  std::string search_path;             // the PATH the program was looked up in
  std::string start_dir;               // where a relative program was looked for: the workdir, else the attempt's
  std::optional<std::string> workdir;  // the job's, when it has one
  const JobAccount* account = nullptr;  // the account it runs as; nullptr: the agent's own
  std::string output_copy;  // the files its output was to be copied to (sbatch -o/-e); empty: none
  std::string error_copy;
};

std::string describe_launch_failure(const SpawnFailure& failure, const LaunchContext& context);

}  // namespace trainyard::agent
