#pragma once
// Paths built from what the network or a user sent (an attempt id, a checkpoint directory named in
// a launch) must stay under the root they are meant for. These checks are lexical first (no `..`,
// no absolute part, no empty or NUL component), then on disk: no component below the root that
// already exists may be a symlink, so a link planted where a job's directory would be cannot send
// its writes elsewhere. The root itself is trusted (the operator chose it).
#include <filesystem>
#include <string>
#include <string_view>

namespace trainyard::inline proto {

// `root / relative`, or InvalidInput(field) when `relative` is empty, absolute, holds a NUL, an
// empty, `.` or `..` component, or walks through a symlink below `root`.
std::filesystem::path path_under(const std::filesystem::path& root, std::string_view relative,
                                 const std::string& field);

// `absolute` itself when it lies strictly below `root` by the rules of path_under; otherwise
// InvalidInput(field).
std::filesystem::path path_inside(const std::filesystem::path& root, std::string_view absolute,
                                  const std::string& field);

// `absolute` when it starts with '/' and has no empty, `.`, `..` or NUL component; no disk check
// (for a path whose root the reader does not know).
std::filesystem::path plain_absolute_path(std::string_view absolute, const std::string& field);

}  // namespace trainyard::proto
