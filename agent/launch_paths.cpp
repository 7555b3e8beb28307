#include "agent/launch_paths.h"

#include "proto/contained_path.h"
#include "proto/errors.h"

namespace trainyard::agent {

std::filesystem::path attempt_dir(const std::string& work_dir, const std::string& cluster, AttemptId id) {
  const std::string name = cluster.empty() ? std::to_string(id) : cluster + "-" + std::to_string(id);
  return path_under(std::filesystem::path(work_dir) / "attempts", name, "attempt_id");
}

void check_checkpoint_paths(const LaunchMsg& launch, const std::string& checkpoint_root) {
  if (launch.checkpoint_dir.empty()) {
    if (launch.resume_from) throw InvalidInput("resume_from", "given without a checkpoint_dir");
    return;
  }
  const auto dir = checkpoint_root.empty() ? plain_absolute_path(launch.checkpoint_dir, "checkpoint_dir")
                                           : path_inside(checkpoint_root, launch.checkpoint_dir, "checkpoint_dir");
  if (launch.resume_from) path_inside(dir, *launch.resume_from, "resume_from");
}

}  // namespace trainyard::agent
