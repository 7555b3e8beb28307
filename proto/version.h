#pragma once
// What was built: the project's version and the git commit CMake configured it from ("unknown" when
// built from a source tarball without .git). TRAINYARD_VERSION comes from project(VERSION ...).
#include <string>
#include <string_view>

namespace trainyard::inline proto {

std::string_view build_version();
std::string_view build_commit();
// "0.1.0 (commit 3f2a9c1d4e5b)": what an agent tells the daemon it runs (provenance).
std::string version_with_commit();
// "trainyard-agent 0.1.0 (commit 3f2a9c1d4e5b)": what --version prints.
std::string version_line(std::string_view program);

}  // namespace trainyard::proto
