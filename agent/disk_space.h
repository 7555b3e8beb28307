#pragma once
// What the agent measures for storage health and accounting: free space on the
// node's work and checkpoint filesystems (statvfs), and the bytes of an attempt's logs. The daemon
// judges and sums; a measurement that fails is left out rather than reported as zero, which would
// read as a full disk.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "proto/node.h"

namespace trainyard::agent {

// The filesystem holding `path`, as `role`; nullopt when statvfs fails.
std::optional<DiskSpace> measure_disk(const std::string& role, const std::filesystem::path& path);
// The work filesystem, and the checkpoint root's when the agent has one.
std::vector<DiskSpace> measure_disks(const std::string& work_dir, const std::string& checkpoint_root);
// Bytes of the *.log files directly in an attempt's directory.
std::int64_t log_bytes_in(const std::filesystem::path& attempt_dir);
// The most entries work_bytes_in visits: a job that makes millions of files must not stall the
// agent's heartbeat (what lies past them is not counted).
inline constexpr std::size_t kMaxWorkEntriesCounted = 100'000;
// Bytes of everything else under an attempt's directory (the job's work files), symlinks not
// followed.
std::int64_t work_bytes_in(const std::filesystem::path& attempt_dir);
// Bytes of everything under `dir` (a job's checkpoint directory), as work_bytes_in counts them.
std::int64_t tree_bytes_in(const std::filesystem::path& dir);
// The filesystem `path` is on; nullopt when it cannot be looked at.
std::optional<dev_t> device_of(const std::filesystem::path& path);

}  // namespace trainyard::agent
