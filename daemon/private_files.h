#pragma once
// The daemon's private files: its data directory (0700), the database, and the token files
// admin.token and join.token (0600), which hold secrets in clear.
#include <sys/types.h>

#include <filesystem>
#include <string>

namespace trainyard::daemon {

// Writes `content` to `path` atomically (temporary file, fsync, rename) with the given mode.
void write_file_atomically(const std::filesystem::path& path, const std::string& content, mode_t mode);

// Gives an existing `path` exactly `perms`, logging when that changed them. The umask covers what
// the daemon creates; this covers a directory or database left by an older version.
void make_private(const std::filesystem::path& path, std::filesystem::perms perms);

// Why the token file at `path` may not be used, empty when it may (or does not exist): group or
// others may read or write it, so its secret may have leaked, and quietly tightening the mode
// would hide that.
std::string exposed_token_file(const std::filesystem::path& path);

}  // namespace trainyard::daemon
