#include "agent/job_python.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace trainyard::agent {

void install_job_python(const std::string& dir) {
  namespace fs = std::filesystem;
  const auto readable_dir = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec;
  const auto readable_file = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;
  try {
    for (const auto& file : job_python_files()) {
      const fs::path target = fs::path(dir) / file.path;
      fs::create_directories(target.parent_path());
      // The folders the umask made the agent's alone, each made readable.
      fs::path folder = dir;
      fs::permissions(folder, readable_dir, fs::perm_options::replace);
      for (const auto& part : fs::path(file.path).parent_path()) {
        folder /= part;
        fs::permissions(folder, readable_dir, fs::perm_options::replace);
      }
      const fs::path partial = target.string() + ".partial";
      {
        std::ofstream out(partial, std::ios::binary | std::ios::trunc);
        out.write(file.content.data(), static_cast<std::streamsize>(file.content.size()));
        if (!out.flush()) throw std::runtime_error("cannot write " + partial.string());
      }
      fs::permissions(partial, readable_file, fs::perm_options::replace);
      fs::rename(partial, target);
    }
  } catch (const fs::filesystem_error& e) {
    throw std::runtime_error(std::string("cannot write the jobs' Python files: ") + e.what());
  }
}

}  // namespace trainyard::agent
