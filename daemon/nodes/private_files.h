#pragma once
// The daemon's private files: its data directory (0700), the database, and the token files
// admin.token and join.token (0600), which hold secrets in clear.
#include <sys/types.h>

#include <filesystem>
#include <string>

#include "proto/result.h"

namespace trainyard::daemon {

// Writes `content` to `path` atomically (temporary file, fsync, rename) with the given mode.
void write_file_atomically(const std::filesystem::path& path, const std::string& content, mode_t mode);

// Gives an existing `path` exactly `perms`, logging when that changed them. The umask covers what
// the daemon creates; this covers a directory or database left by an older version.
void make_private(const std::filesystem::path& path, std::filesystem::perms perms);

// Whether the token file at `path` may be used (it may when it does not exist yet): not when group
// or others may read or write it, so its secret may have leaked, and quietly tightening the mode
// would hide that. The refusal is invalid_input naming the path, with its mode and what to do.
Result<void> check_token_file_private(const std::filesystem::path& path);

}  // namespace trainyard::daemon
