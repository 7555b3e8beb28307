#pragma once
// The paths an attempt's files go to, built from what the daemon sent in a launch. A launch naming
// a path outside the agent's roots (a compromised or confused daemon, a symlink planted by a job)
// is refused before anything is created or written (proto/contained_path.h).
#include <filesystem>
#include <string>

#include "proto/messages.h"

namespace trainyard::agent {

// WORK_DIR/attempts/CLUSTER-ID, or WORK_DIR/attempts/ID for the empty cluster name (proto
// WelcomeMsg::cluster): attempt ids start again at 1 with every database, and two clusters' agents
// may share a host, but no two clusters share a name. InvalidInput("attempt_id") when a symlink
// sits there.
std::filesystem::path attempt_dir(const std::string& work_dir, const std::string& cluster, AttemptId id);

// InvalidInput naming checkpoint_dir or resume_from when checkpoint_dir leaves `checkpoint_root`
// (without a root: when it is not a plain absolute path), or resume_from leaves checkpoint_dir.
void check_checkpoint_paths(const LaunchMsg& launch, const std::string& checkpoint_root);

}  // namespace trainyard::agent
