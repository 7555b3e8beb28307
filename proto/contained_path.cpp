#include "proto/contained_path.h"

#include <sys/stat.h>

#include <algorithm>

#include "proto/errors.h"

namespace fs = std::filesystem;

namespace trainyard::inline proto {

namespace {

void refuse_symlinks_below(const fs::path& root, const fs::path& relative, const std::string& field) {
  fs::path walked = root;
  for (const auto& part : relative) {
    walked /= part;
    struct stat st {};
    if (::lstat(walked.c_str(), &st) != 0) return;  // nothing below a missing component can be a link yet
    if (S_ISLNK(st.st_mode)) throw InvalidInput(field, walked.string() + " is a symlink");
  }
}

void check_components(std::string_view relative, const std::string& field, const std::string& where) {
  if (relative.empty()) throw InvalidInput(field, "must not be empty");
  if (relative.find('\0') != std::string_view::npos) throw InvalidInput(field, "must not contain NUL");
  std::size_t start = 0;
  while (start <= relative.size()) {
    const std::size_t end = std::min(relative.find('/', start), relative.size());
    const std::string_view part = relative.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") {
      throw InvalidInput(field, "must not have an empty, '.' or '..' component (would leave " + where + ")");
    }
    start = end + 1;
  }
}

}  // namespace

fs::path path_under(const fs::path& root, std::string_view relative, const std::string& field) {
  if (relative.starts_with('/')) throw InvalidInput(field, "must be relative to " + root.string());
  check_components(relative, field, root.string());
  const fs::path rel{std::string(relative)};
  refuse_symlinks_below(root, rel, field);
  return root / rel;
}

fs::path plain_absolute_path(std::string_view absolute, const std::string& field) {
  if (!absolute.starts_with('/')) throw InvalidInput(field, "must be an absolute path");
  check_components(absolute.substr(1), field, "/");
  return fs::path(std::string(absolute));
}

fs::path path_inside(const fs::path& root, std::string_view absolute, const std::string& field) {
  const std::string prefix = root.string().ends_with('/') ? root.string() : root.string() + "/";
  if (!absolute.starts_with(prefix)) throw InvalidInput(field, "must lie under " + root.string());
  path_under(root, absolute.substr(prefix.size()), field);
  return fs::path(std::string(absolute));
}

}  // namespace trainyard::proto
